default allow
mount kill
keyctl trap
bpf kill_thread
ptrace log

default allow
ptrace errno EPERM
ptrace errno EACCES

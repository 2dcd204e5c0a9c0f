default allow
ptrace errno EPERM



ptrce errno EPERM

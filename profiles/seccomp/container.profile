# The container tier's default seccomp profile (warren).
#
# Allow everything except the calls that reach kernel surface a sandbox has no business with:
# other processes' memory, kernel modules, the keyring, BPF, new mounts and namespaces, clocks,
# and the ioctls that move blocks between files. The capability bounding set already refuses
# most of these to root inside the user namespace; seccomp is the second wall, and the only one
# for the calls that need no capability at all (userfaultfd, keyctl, perf_event_open,
# unshare(CLONE_NEWUSER)). Refusals answer EPERM, as Docker's profile does, so programs that
# probe for a feature degrade instead of crashing, and each one is logged through audit.
#
# Syntax, one statement per line ('#' starts a comment):
#   default ACTION                       what every call not named below gets
#   arch NAME...                         syscall tables the rules cover (default: native,
#                                        plus x86 and x32 on x86-64)
#   [?]SYSCALL ACTION [nolog] [if COND [and COND]...]
# ACTION is allow, log, trap, kill, kill_thread or errno NAME|NUMBER. nolog keeps a refusal out
# of the audit log. COND is "argN [& MASK] OP VALUE" (OP: == != < <= > >=) or
# "argN [& MASK] not in {VALUE, ...}"; VALUE is a number or a constant (FICLONE, CLONE_NEWUSER,
# PER_LINUX, ...), several joined with |. Several lines for one call: any that matches refuses.
# A leading ? skips a call this libseccomp does not know instead of failing.
#
# Arguments are 64-bit in seccomp. ioctl's request and personality's persona are 32-bit in the
# kernel: their conditions mask with 0xffffffff, or 0x100000000|FICLONE would slip past.

default allow

# other processes
ptrace                  errno EPERM
process_vm_readv        errno EPERM
process_vm_writev       errno EPERM
pidfd_getfd             errno EPERM

# the kernel itself
kexec_load              errno EPERM
kexec_file_load         errno EPERM
init_module             errno EPERM
finit_module            errno EPERM
delete_module           errno EPERM
reboot                  errno EPERM
swapon                  errno EPERM
swapoff                 errno EPERM
acct                    errno EPERM
iopl                    errno EPERM
ioperm                  errno EPERM
syslog                  errno EPERM
quotactl                errno EPERM
lookup_dcookie          errno EPERM
bpf                     errno EPERM
perf_event_open         errno EPERM
userfaultfd             errno EPERM

# the keyring is not namespaced
keyctl                  errno EPERM
add_key                 errno EPERM
request_key             errno EPERM

# handles bypass the mount namespace's view of paths
open_by_handle_at       errno EPERM
name_to_handle_at       errno EPERM

# the mount tree and the namespaces are fixed once the sandbox runs
mount                   errno EPERM
umount2                 errno EPERM
fsopen                  errno EPERM
fsconfig                errno EPERM
fsmount                 errno EPERM
fspick                  errno EPERM
open_tree               errno EPERM
move_mount              errno EPERM
mount_setattr           errno EPERM
pivot_root              errno EPERM
setns                   errno EPERM
unshare                 errno EPERM

# A new user namespace gives its creator every capability again inside it, which is the way to
# most of the kernel surface above; the other CLONE_NEW* flags already need CAP_SYS_ADMIN, which
# the bounding set removed.
clone                   errno EPERM  if arg0 & CLONE_NEWUSER == CLONE_NEWUSER
# clone3 passes its flags in memory, out of seccomp's reach: ENOSYS makes glibc (2.34+) fall
# back to clone, whose flags the rule above sees. Not a denial, so not logged.
clone3                  errno ENOSYS nolog

# clocks are global
settimeofday            errno EPERM
clock_settime           errno EPERM
clock_adjtime           errno EPERM
adjtimex                errno EPERM

# ioctls that reach across files (the extent-swapping trick that defeated a read-only file) or
# push input into the terminal of whoever owns it
ioctl                   errno EPERM  if arg1 & 0xffffffff == FICLONE
ioctl                   errno EPERM  if arg1 & 0xffffffff == FICLONERANGE
ioctl                   errno EPERM  if arg1 & 0xffffffff == FIDEDUPERANGE
ioctl                   errno EPERM  if arg1 & 0xffffffff == XFS_IOC_SWAPEXT
ioctl                   errno EPERM  if arg1 & 0xffffffff == EXT4_IOC_MOVE_EXT
ioctl                   errno EPERM  if arg1 & 0xffffffff == TIOCSTI

# personality(2) keeps the harmless personas Docker allows and the query; anything else
# (notably READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO) is refused.
personality             errno EPERM  if arg0 & 0xffffffff not in {PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32|UNAME26, 0xffffffff}

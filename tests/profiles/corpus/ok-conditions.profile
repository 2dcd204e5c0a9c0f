default allow
ioctl errno EPERM if arg1 & 0xffffffff not in {1, 2, 0x5401}
socket errno EAFNOSUPPORT if arg0 == 16 and arg1 & 0xf == 3
kill errno EPERM if arg1 >= 32

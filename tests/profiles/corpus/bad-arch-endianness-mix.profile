
default allow

clone errno ENOSYS nolog
arch x86 parisc native 
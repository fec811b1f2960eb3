package boxhost

import "syscall"

const nofollow = syscall.O_NOFOLLOW

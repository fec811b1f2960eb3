package docker

import "syscall"

const nofollow = syscall.O_NOFOLLOW

#include "fsflags_shim.h"
#include <sys/ioctl.h>
#include <linux/fs.h>

int vault_fs_get_flags(int fd, int *flags) {
    return ioctl(fd, FS_IOC_GETFLAGS, flags);
}

int vault_fs_set_flags(int fd, int flags) {
    return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

int vault_fs_nodump_flag(void) {
    return FS_NODUMP_FL;
}

#include "fsflags_shim.h"
#include <sys/ioctl.h>
#include <linux/fs.h>

int CLinuxShims_fs_get_flags(int fd, int *flags) {
    return ioctl(fd, FS_IOC_GETFLAGS, flags);
}

int CLinuxShims_fs_set_flags(int fd, int flags) {
    return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

int CLinuxShims_fs_nodump_flag(void) {
    return FS_NODUMP_FL;
}

#include <sys/xattr.h>

ssize_t CLinuxShims_xattr_get(const char *path, const char *name, void *value, size_t size) {
    return getxattr(path, name, value, size);
}

int CLinuxShims_xattr_set(const char *path, const char *name, const void *value, size_t size) {
    return setxattr(path, name, value, size, 0);
}

int CLinuxShims_xattr_remove(const char *path, const char *name) {
    return removexattr(path, name);
}

#pragma once

/// Typed wrappers for the inode-flag ioctls (ioctl(2) is variadic, so Swift cannot call it).
/// See ioctl_iflags(2): FS_IOC_GETFLAGS / FS_IOC_SETFLAGS take a pointer to an int.

/// Reads the inode flags of the open file `fd` into `*flags`. Returns 0, or -1 with errno set
/// (ENOTTY / EOPNOTSUPP / EINVAL when the filesystem has no inode flags).
int CLinuxShims_fs_get_flags(int fd, int *flags);

/// Replaces the inode flags of the open file `fd` with `flags`. Returns 0, or -1 with errno set.
int CLinuxShims_fs_set_flags(int fd, int flags);

/// FS_NODUMP_FL from <linux/fs.h>: "do not include this file in backups" (chattr +d).
int CLinuxShims_fs_nodump_flag(void);

#include <sys/types.h>

/// getxattr(2) / setxattr(2) / removexattr(2) on `path` (<sys/xattr.h> is not in Swift's Glibc
/// module). Same return values and errno as the system calls (ENOTSUP: no user xattrs here).
ssize_t CLinuxShims_xattr_get(const char *path, const char *name, void *value, size_t size);
int CLinuxShims_xattr_set(const char *path, const char *name, const void *value, size_t size);
int CLinuxShims_xattr_remove(const char *path, const char *name);

#ifndef CFUSESHIMS_H
#define CFUSESHIMS_H
// What Swift cannot do directly with libfuse3's low-level API: fill `struct fuse_lowlevel_ops`
// (its callbacks take `struct fuse_file_info`, whose flags are bit-fields), build `fuse_args`,
// pack `struct stat`, and run one request of the session loop. Each FUSE callback is forwarded
// to a handler with plain arguments (`fh` from the file info); the handler replies with
// `fuse_reply_err`, `fuse_reply_buf`, `fuse_reply_write` or the `CFuseShims_reply_…` below.
#include <stddef.h>
#include <stdint.h>

typedef void *CFuseShims_Req;
typedef void *CFuseShims_FileInfo;
typedef struct fuse_session CFuseShims_Session;

/// The attributes of one inode (packed into `struct stat` by the shim).
typedef struct {
    uint64_t ino;
    uint32_t mode;
    uint32_t nlink;
    uint64_t size;
    int64_t mtime_sec;
    int64_t mtime_nsec;
    uint32_t uid;
    uint32_t gid;
} CFuseShims_Attr;

/// The handlers (every one must reply to `req` exactly once). `fi` is passed where the reply
/// needs it (open, create, opendir).
typedef struct {
    void (*lookup)(CFuseShims_Req req, uint64_t parent, const char *name);
    void (*getattr)(CFuseShims_Req req, uint64_t ino);
    void (*setattr)(CFuseShims_Req req, uint64_t ino, int to_set, uint32_t mode, uint64_t size,
                    int64_t mtime_sec, int64_t mtime_nsec, int has_fh, uint64_t fh);
    void (*mkdir)(CFuseShims_Req req, uint64_t parent, const char *name, uint32_t mode);
    void (*unlink)(CFuseShims_Req req, uint64_t parent, const char *name);
    void (*rmdir)(CFuseShims_Req req, uint64_t parent, const char *name);
    void (*rename)(CFuseShims_Req req, uint64_t parent, const char *name, uint64_t newparent,
                   const char *newname, unsigned int flags);
    void (*open)(CFuseShims_Req req, uint64_t ino, int flags, CFuseShims_FileInfo fi);
    void (*create)(CFuseShims_Req req, uint64_t parent, const char *name, uint32_t mode, int flags,
                   CFuseShims_FileInfo fi);
    void (*read)(CFuseShims_Req req, uint64_t ino, size_t size, int64_t off, uint64_t fh);
    void (*write)(CFuseShims_Req req, uint64_t ino, const char *buf, size_t size, int64_t off, uint64_t fh);
    void (*flush)(CFuseShims_Req req, uint64_t ino, uint64_t fh);
    void (*release)(CFuseShims_Req req, uint64_t ino, uint64_t fh);
    void (*fsync)(CFuseShims_Req req, uint64_t ino, int datasync, uint64_t fh);
    void (*opendir)(CFuseShims_Req req, uint64_t ino, CFuseShims_FileInfo fi);
    void (*readdir)(CFuseShims_Req req, uint64_t ino, size_t size, int64_t off, uint64_t fh);
    /// As readdir, with each entry's attributes (CFuseShims_add_direntry_plus): `ls -l` needs no lookups.
    void (*readdirplus)(CFuseShims_Req req, uint64_t ino, size_t size, int64_t off, uint64_t fh);
    void (*releasedir)(CFuseShims_Req req, uint64_t ino, uint64_t fh);
    void (*statfs)(CFuseShims_Req req, uint64_t ino);
} CFuseShims_Handlers;

/// A new session (not mounted yet) forwarding to `handlers` (copied), with the options
/// `default_permissions,fsname=FSNAME,subtype=vault` (and `ro` when `read_only`). NULL on failure.
CFuseShims_Session *CFuseShims_session_new(const CFuseShims_Handlers *handlers, const char *fsname, int read_only);
/// Mounts the session at `mountpoint`; 0 on success, -1 on failure.
int CFuseShims_mount(CFuseShims_Session *se, const char *mountpoint);
/// The /dev/fuse descriptor, to poll.
int CFuseShims_fd(CFuseShims_Session *se);
/// Reads and handles one request: 1 handled, 0 interrupted (try again), -1 the session ended
/// (unmounted), -errno on another failure.
int CFuseShims_process_one(CFuseShims_Session *se);
/// Unmounts the session (if still mounted) and closes its /dev/fuse descriptor.
void CFuseShims_session_unmount(CFuseShims_Session *se);
/// Frees the session (after `CFuseShims_session_unmount`, or one that never mounted).
void CFuseShims_session_destroy(CFuseShims_Session *se);
/// Drops the kernel's cached pages and attributes of `ino`; 0 or -errno (-ENOENT: not cached).
int CFuseShims_invalidate_inode(CFuseShims_Session *se, uint64_t ino);
/// Drops the kernel's cached entry `name` in `parent`.
int CFuseShims_invalidate_entry(CFuseShims_Session *se, uint64_t parent, const char *name);

int CFuseShims_reply_err(CFuseShims_Req req, int err);
int CFuseShims_reply_buf(CFuseShims_Req req, const void *buf, size_t size);
int CFuseShims_reply_write(CFuseShims_Req req, size_t count);
int CFuseShims_reply_entry(CFuseShims_Req req, const CFuseShims_Attr *attr, double timeout);
int CFuseShims_reply_attr(CFuseShims_Req req, const CFuseShims_Attr *attr, double timeout);
/// Replies to open/opendir with the handle `fh`; `keep_cache`: the kernel may keep pages cached
/// at a previous open; `direct_io`: bypass the page cache for this open file.
int CFuseShims_reply_open(CFuseShims_Req req, CFuseShims_FileInfo fi, uint64_t fh, int keep_cache, int direct_io);
int CFuseShims_reply_create(CFuseShims_Req req, const CFuseShims_Attr *attr, double timeout,
                            CFuseShims_FileInfo fi, uint64_t fh);
int CFuseShims_reply_statfs(CFuseShims_Req req, uint64_t bsize, uint64_t blocks, uint64_t bfree,
                            uint64_t files, uint64_t namemax);
/// Adds one directory entry to `buf` (see fuse_add_direntry); the size it needs, which may be
/// more than `bufsize` (then nothing was added).
size_t CFuseShims_add_direntry(CFuseShims_Req req, char *buf, size_t bufsize, const char *name,
                               uint64_t ino, uint32_t mode, int64_t next_off);

/// Adds one entry with its attributes to `buf` (see fuse_add_direntry_plus); the size it needs.
size_t CFuseShims_add_direntry_plus(CFuseShims_Req req, char *buf, size_t bufsize, const char *name,
                                    const CFuseShims_Attr *attr, double timeout, int64_t next_off);

#endif

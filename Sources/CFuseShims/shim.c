#include "CFuseShims.h"
#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

// One session per process (a mount is its own process): the handlers and the receive buffer.
static CFuseShims_Handlers handlers;
static struct fuse_buf receive_buf;

static void pack(struct stat *st, const CFuseShims_Attr *a) {
    memset(st, 0, sizeof *st);
    st->st_ino = a->ino;
    st->st_mode = a->mode;
    st->st_nlink = a->nlink;
    st->st_size = (off_t)a->size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
    st->st_uid = a->uid;
    st->st_gid = a->gid;
    st->st_mtim.tv_sec = a->mtime_sec;
    st->st_mtim.tv_nsec = a->mtime_nsec;
    st->st_ctim = st->st_mtim;
    st->st_atim = st->st_mtim;
}

static void entry(struct fuse_entry_param *e, const CFuseShims_Attr *a, double timeout) {
    memset(e, 0, sizeof *e);
    e->ino = a->ino;
    e->generation = 1;
    e->attr_timeout = timeout;
    e->entry_timeout = timeout;
    pack(&e->attr, a);
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) { handlers.lookup(req, parent, name); }
static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) { (void)ino; (void)nlookup; fuse_reply_none(req); }
static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { (void)fi; handlers.getattr(req, ino); }
static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi) {
    int64_t sec = attr->st_mtim.tv_sec, nsec = attr->st_mtim.tv_nsec;
    handlers.setattr(req, ino, to_set, (uint32_t)attr->st_mode, (uint64_t)attr->st_size, sec, nsec,
                     fi != NULL, fi ? fi->fh : 0);
}
static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) { handlers.mkdir(req, parent, name, mode); }
static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) { handlers.unlink(req, parent, name); }
static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) { handlers.rmdir(req, parent, name); }
static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname, unsigned int flags) {
    handlers.rename(req, parent, name, newparent, newname, flags);
}
static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { handlers.open(req, ino, fi->flags, fi); }
static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi) {
    handlers.create(req, parent, name, mode, fi->flags, fi);
}
static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) { handlers.read(req, ino, size, off, fi->fh); }
static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    handlers.write(req, ino, buf, size, off, fi->fh);
}
static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { handlers.flush(req, ino, fi->fh); }
static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { handlers.release(req, ino, fi->fh); }
static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) { handlers.fsync(req, ino, datasync, fi->fh); }
static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { handlers.opendir(req, ino, fi); }
static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) { handlers.readdir(req, ino, size, off, fi->fh); }
static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) { handlers.readdirplus(req, ino, size, off, fi->fh); }
static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { handlers.releasedir(req, ino, fi->fh); }
static void ll_statfs(fuse_req_t req, fuse_ino_t ino) { handlers.statfs(req, ino); }

CFuseShims_Session *CFuseShims_session_new(const CFuseShims_Handlers *h, const char *fsname, int read_only) {
    handlers = *h;
    static struct fuse_lowlevel_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.lookup = ll_lookup; ops.forget = ll_forget; ops.getattr = ll_getattr; ops.setattr = ll_setattr;
    ops.mkdir = ll_mkdir; ops.unlink = ll_unlink; ops.rmdir = ll_rmdir; ops.rename = ll_rename;
    ops.open = ll_open; ops.create = ll_create; ops.read = ll_read; ops.write = ll_write;
    ops.flush = ll_flush; ops.release = ll_release; ops.fsync = ll_fsync;
    ops.opendir = ll_opendir; ops.readdir = ll_readdir; ops.readdirplus = ll_readdirplus; ops.releasedir = ll_releasedir; ops.statfs = ll_statfs;
    char options[512];
    if (snprintf(options, sizeof options, "default_permissions,fsname=%s,subtype=vault%s", fsname, read_only ? ",ro" : "")
        >= (int)sizeof options) return NULL;
    char *argv[] = { "vault", "-o", options, NULL };
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
    return se;
}

int CFuseShims_mount(CFuseShims_Session *se, const char *mountpoint) { return fuse_session_mount(se, mountpoint) == 0 ? 0 : -1; }
int CFuseShims_fd(CFuseShims_Session *se) { return fuse_session_fd(se); }

int CFuseShims_process_one(CFuseShims_Session *se) {
    if (fuse_session_exited(se)) return -1;
    int res = fuse_session_receive_buf(se, &receive_buf);
    if (res == -EINTR || res == -EAGAIN) return 0;
    if (res == 0 || res == -ENODEV) return -1;
    if (res < 0) return res;
    fuse_session_process_buf(se, &receive_buf);
    return 1;
}

void CFuseShims_session_unmount(CFuseShims_Session *se) { fuse_session_unmount(se); }

void CFuseShims_session_destroy(CFuseShims_Session *se) {
    fuse_session_destroy(se);
    free(receive_buf.mem);
    receive_buf.mem = NULL;
}

int CFuseShims_invalidate_inode(CFuseShims_Session *se, uint64_t ino) { return fuse_lowlevel_notify_inval_inode(se, ino, 0, 0); }
int CFuseShims_invalidate_entry(CFuseShims_Session *se, uint64_t parent, const char *name) {
    return fuse_lowlevel_notify_inval_entry(se, parent, name, strlen(name));
}

int CFuseShims_reply_err(CFuseShims_Req req, int err) { return fuse_reply_err(req, err); }
int CFuseShims_reply_buf(CFuseShims_Req req, const void *buf, size_t size) { return fuse_reply_buf(req, buf, size); }
int CFuseShims_reply_write(CFuseShims_Req req, size_t count) { return fuse_reply_write(req, count); }

int CFuseShims_reply_entry(CFuseShims_Req req, const CFuseShims_Attr *attr, double timeout) {
    struct fuse_entry_param e;
    entry(&e, attr, timeout);
    return fuse_reply_entry(req, &e);
}

int CFuseShims_reply_attr(CFuseShims_Req req, const CFuseShims_Attr *attr, double timeout) {
    struct stat st;
    pack(&st, attr);
    return fuse_reply_attr(req, &st, timeout);
}

int CFuseShims_reply_open(CFuseShims_Req req, CFuseShims_FileInfo fi, uint64_t fh, int keep_cache, int direct_io) {
    struct fuse_file_info *f = fi;
    f->fh = fh;
    f->keep_cache = keep_cache ? 1 : 0;
    f->direct_io = direct_io ? 1 : 0;
    return fuse_reply_open(req, f);
}

int CFuseShims_reply_create(CFuseShims_Req req, const CFuseShims_Attr *attr, double timeout, CFuseShims_FileInfo fi, uint64_t fh) {
    struct fuse_entry_param e;
    entry(&e, attr, timeout);
    struct fuse_file_info *f = fi;
    f->fh = fh;
    return fuse_reply_create(req, &e, f);
}

int CFuseShims_reply_statfs(CFuseShims_Req req, uint64_t bsize, uint64_t blocks, uint64_t bfree, uint64_t files, uint64_t namemax) {
    struct statvfs s;
    memset(&s, 0, sizeof s);
    s.f_bsize = bsize; s.f_frsize = bsize;
    s.f_blocks = blocks; s.f_bfree = bfree; s.f_bavail = bfree;
    s.f_files = files; s.f_ffree = 1000000; s.f_favail = 1000000;
    s.f_namemax = namemax;
    return fuse_reply_statfs(req, &s);
}

size_t CFuseShims_add_direntry(CFuseShims_Req req, char *buf, size_t bufsize, const char *name, uint64_t ino, uint32_t mode, int64_t next_off) {
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = ino;
    st.st_mode = mode;
    return fuse_add_direntry(req, buf, bufsize, name, &st, next_off);
}

size_t CFuseShims_add_direntry_plus(CFuseShims_Req req, char *buf, size_t bufsize, const char *name,
                                    const CFuseShims_Attr *attr, double timeout, int64_t next_off) {
    struct fuse_entry_param e;
    entry(&e, attr, timeout);
    return fuse_add_direntry_plus(req, buf, bufsize, name, &e, next_off);
}

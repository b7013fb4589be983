#define _GNU_SOURCE
#include "tmpfile_shim.h"
#include <errno.h>
#include <fcntl.h>

int CLinuxShims_open_unnamed(const char *dir) {
    int fd;
    do { fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600); } while (fd < 0 && errno == EINTR);
    return fd;
}

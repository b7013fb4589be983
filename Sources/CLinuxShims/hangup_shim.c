// epoll hang-up watching: see include/hangup_shim.h.
#include "hangup_shim.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

int CLinuxShims_hangup_create(int *wake_fd) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -1;
    int ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ev < 0) { close(ep); return -1; }
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = 0 };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) != 0) { close(ev); close(ep); return -1; }
    *wake_fd = ev;
    return ep;
}

int CLinuxShims_hangup_add(int epfd, int fd, uint64_t id) {
    struct epoll_event e = { .events = EPOLLRDHUP | EPOLLONESHOT, .data.u64 = id };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

int CLinuxShims_hangup_remove(int epfd, int fd) {
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

int CLinuxShims_hangup_wait(int epfd, uint64_t *ids, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) ids[i] = events[i].data.u64;
    return n;
}

void CLinuxShims_hangup_wake(int wake_fd) {
    uint64_t one = 1;
    ssize_t r = write(wake_fd, &one, sizeof one);
    (void)r;
}

#pragma once
// epoll wrappers for watching many sockets for a peer hang-up (`struct epoll_event` is packed
// on x86-64, so Swift does not touch it).
#include <stdint.h>

/// An epoll set with an eventfd registered under id 0 (written by `CLinuxShims_hangup_wake`).
/// Returns the epoll descriptor and sets *wake_fd, or -1 with errno set.
int CLinuxShims_hangup_create(int *wake_fd);

/// Watches `fd` once for `EPOLLRDHUP` (the peer closed its side), `EPOLLHUP` or `EPOLLERR`,
/// reported under `id` (≥ 1). Returns 0, or -1 with errno set.
int CLinuxShims_hangup_add(int epfd, int fd, uint64_t id);

/// Stops watching `fd`; call before it is closed. Returns 0, or -1 with errno set.
int CLinuxShims_hangup_remove(int epfd, int fd);

/// Waits up to `timeout_ms` (-1: no limit) and writes the ids that fired (0: the wake fd) into
/// `ids`; returns their count, or -1 with errno set.
int CLinuxShims_hangup_wait(int epfd, uint64_t *ids, int max, int timeout_ms);

/// Makes a `CLinuxShims_hangup_wait` on the set return (reports id 0).
void CLinuxShims_hangup_wake(int wake_fd);

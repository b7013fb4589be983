#pragma once
// libmicrohttpd wrappers: typed, fixed-argument forms of the variadic calls Swift cannot import
// (`MHD_start_daemon`, `MHD_get_daemon_info`).
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Starts a thread-per-connection daemon (internal poll() thread) bound to `ipv4_host:port`
/// (host in dotted form; port 0 picks a free port). With `tls_key_pem` and `tls_cert_pem`
/// non-NULL, HTTPS is served. `completed` is called when each request ends. Returns NULL on
/// failure. The corresponding C function is `MHD_start_daemon`.
struct MHD_Daemon *CVaultShims_mhd_start(const char *ipv4_host, uint16_t port,
                                         MHD_AccessHandlerCallback handler, void *handler_cls,
                                         MHD_RequestCompletedCallback completed, void *completed_cls,
                                         const char *tls_key_pem, const char *tls_cert_pem,
                                         size_t connection_memory_limit,
                                         unsigned int connection_timeout_seconds,
                                         unsigned int connection_limit);

/// The port the daemon actually listens on (0 if unknown). The corresponding C function is
/// `MHD_get_daemon_info(…, MHD_DAEMON_INFO_BIND_PORT)`.
uint16_t CVaultShims_mhd_bound_port(struct MHD_Daemon *daemon);

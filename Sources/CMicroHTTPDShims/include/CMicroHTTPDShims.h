#pragma once
// libmicrohttpd wrappers: typed, fixed-argument forms of the variadic calls Swift cannot import
// (`MHD_start_daemon`, `MHD_get_daemon_info`, `MHD_get_connection_info`).
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// How `CMicroHTTPDShims_start` runs the daemon. Zero limits mean "none".
typedef struct {
    /// Dotted IPv4 address to bind; port 0 picks a free port.
    const char *ipv4_host;
    uint16_t port;
    /// 0: one thread per connection (internal poll() thread accepts). N ≥ 1: N threads, each
    /// polling its own connections (level-triggered poll(), not epoll: libmicrohttpd 0.9.75's
    /// edge-triggered epoll misses a FIN that arrives with a partial request line); connections
    /// may be suspended (`MHD_ALLOW_SUSPEND_RESUME`) and then leave the poll set.
    unsigned int thread_pool_size;
    /// Per-connection memory pool (read buffer, headers, write buffer).
    size_t connection_memory_limit;
    /// Seconds without socket activity before a connection is closed.
    unsigned int idle_timeout_seconds;
    /// All connections at once.
    unsigned int connection_limit;
    /// Connections at once from one IP address; more are closed right after accept.
    unsigned int per_ip_connection_limit;
    /// PEM key and certificate: HTTPS when both are non-NULL.
    const char *tls_key_pem;
    const char *tls_cert_pem;
    /// GnuTLS priority string (HTTPS only); NULL keeps libmicrohttpd's "NORMAL".
    const char *tls_priorities;
} CMicroHTTPDShims_config;

/// Starts a daemon as `config` says. `completed` is called when each request ends and
/// `notify` when each connection opens and closes (before its socket is closed). Returns NULL
/// on failure (address in use, bad TLS key or priority string; libmicrohttpd logs why on
/// stderr). The corresponding C function is `MHD_start_daemon`.
struct MHD_Daemon *CMicroHTTPDShims_start(const CMicroHTTPDShims_config *config,
                                         MHD_AccessHandlerCallback handler, void *handler_cls,
                                         MHD_RequestCompletedCallback completed, void *completed_cls,
                                         MHD_NotifyConnectionCallback notify, void *notify_cls);

/// The port the daemon actually listens on (0 if unknown). The corresponding C function is
/// `MHD_get_daemon_info(…, MHD_DAEMON_INFO_BIND_PORT)`.
uint16_t CMicroHTTPDShims_bound_port(struct MHD_Daemon *daemon);

/// The connection's socket (-1 if unknown). The corresponding C function is
/// `MHD_get_connection_info(…, MHD_CONNECTION_INFO_CONNECTION_FD)`.
int CMicroHTTPDShims_connection_fd(struct MHD_Connection *connection);

/// The client's IPv4 address in dotted form into `buffer` (at least 16 bytes); returns 0, or -1
/// when it is unknown or not IPv4. The corresponding C function is
/// `MHD_get_connection_info(…, MHD_CONNECTION_INFO_CLIENT_ADDRESS)`.
int CMicroHTTPDShims_client_ipv4(struct MHD_Connection *connection, char *buffer, size_t size);

/// Sets the connection's idle timeout to `seconds` and restarts its timer: a thread-per-connection
/// stream that waited for news inside its content reader must not count that wait as the
/// client's silence. The corresponding C function is `MHD_set_connection_option(…,
/// MHD_CONNECTION_OPTION_TIMEOUT, …)`.
void CMicroHTTPDShims_restart_idle_timer(struct MHD_Connection *connection, unsigned int seconds);

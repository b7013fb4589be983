// libmicrohttpd wrappers: see include/mhd_shim.h.
#include "mhd_shim.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

/* Leaves the path and query arguments exactly as sent (libmicrohttpd has only turned '+' in
   arguments into spaces): the server decodes them itself, strictly, so a %00 or a bad escape is
   refused rather than cutting the C string short. */
static size_t CVaultShims_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

struct MHD_Daemon *CVaultShims_mhd_start(const char *ipv4_host, uint16_t port,
                                         MHD_AccessHandlerCallback handler, void *handler_cls,
                                         MHD_RequestCompletedCallback completed, void *completed_cls,
                                         const char *tls_key_pem, const char *tls_cert_pem,
                                         size_t connection_memory_limit,
                                         unsigned int connection_timeout_seconds,
                                         unsigned int connection_limit) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4_host, &addr.sin_addr) != 1) return NULL;
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD
                       | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (tls_key_pem != NULL && tls_cert_pem != NULL) {
        flags |= MHD_USE_TLS;
        return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                                MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_UNESCAPE_CALLBACK, CVaultShims_mhd_keep_escapes, NULL,
                                MHD_OPTION_HTTPS_MEM_KEY, tls_key_pem,
                                MHD_OPTION_HTTPS_MEM_CERT, tls_cert_pem,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_UNESCAPE_CALLBACK, CVaultShims_mhd_keep_escapes, NULL,
                            MHD_OPTION_END);
}

uint16_t CVaultShims_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

// libmicrohttpd wrappers: see include/CMicroHTTPDShims.h.
#include "CMicroHTTPDShims.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

// libmicrohttpd's messages (one per refused connection, among others) go to stderr at most
// 20 a second, so a flood of connections cannot flood the log; the rest are counted.
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static time_t log_second;
static unsigned log_count, log_dropped;

static void rate_limited_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&log_lock);
    if (now.tv_sec != log_second) {
        if (log_dropped > 0) fprintf(stderr, "libmicrohttpd: %u more messages dropped\n", log_dropped);
        log_second = now.tv_sec; log_count = 0; log_dropped = 0;
    }
    if (log_count < 20) {
        log_count++;
        fputs("libmicrohttpd: ", stderr);
        vfprintf(stderr, fmt, ap);
    } else {
        log_dropped++;
    }
    pthread_mutex_unlock(&log_lock);
}

/* Leaves the path and query arguments exactly as sent (libmicrohttpd has only turned '+' in
   arguments into spaces): the server decodes them itself, strictly, so a %00 or a bad escape is
   refused rather than cutting the C string short. */
static size_t CMicroHTTPDShims_keep_escapes(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

struct MHD_Daemon *CMicroHTTPDShims_start(const CMicroHTTPDShims_config *c,
                                         MHD_AccessHandlerCallback handler, void *handler_cls,
                                         MHD_RequestCompletedCallback completed, void *completed_cls,
                                         MHD_NotifyConnectionCallback notify, void *notify_cls) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(c->port);
    if (inet_pton(AF_INET, c->ipv4_host, &addr.sin_addr) != 1) return NULL;

    unsigned int flags = MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (c->thread_pool_size == 0) {
        flags |= MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD;
    } else {
        flags |= MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    }
    int tls = c->tls_key_pem != NULL && c->tls_cert_pem != NULL;
    if (tls) flags |= MHD_USE_TLS;

    // Options go through MHD_OPTION_ARRAY so the optional ones need no second call site.
    struct MHD_OptionItem ops[16];
    int n = 0;
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)rate_limited_log, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &addr };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, notify_cls };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)c->connection_memory_limit, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)c->idle_timeout_seconds, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)c->connection_limit, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)c->per_ip_connection_limit, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)CMicroHTTPDShims_keep_escapes, NULL };
    if (c->thread_pool_size > 1) {
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)c->thread_pool_size, NULL };
    }
    if (tls) {
        // The priority string must come after MHD_USE_TLS is known and before the key and
        // certificate, which libmicrohttpd loads at start.
        if (c->tls_priorities != NULL) {
            ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)c->tls_priorities };
        }
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)c->tls_key_pem };
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)c->tls_cert_pem };
    }
    ops[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(flags, c->port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
}

uint16_t CMicroHTTPDShims_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int CMicroHTTPDShims_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

int CMicroHTTPDShims_client_ipv4(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || info->client_addr->sa_family != AF_INET) return -1;
    const struct sockaddr_in *in = (const struct sockaddr_in *)info->client_addr;
    return inet_ntop(AF_INET, &in->sin_addr, buffer, (socklen_t)size) == NULL ? -1 : 0;
}

void CMicroHTTPDShims_restart_idle_timer(struct MHD_Connection *connection, unsigned int seconds) {
    // libmicrohttpd 0.9.75 restarts the timer only when the previous timeout was 0.
    (void)MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    (void)MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

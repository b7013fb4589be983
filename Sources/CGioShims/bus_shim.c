#include "bus_shim.h"
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <string.h>

#define LOGIND "org.freedesktop.login1"

struct CGioShims_bus {
    GDBusConnection *connection;
    int system;
    CGioShims_bus_callback callback;
    void *context;
    /* Guards `closed` and `logind_owner`; held while the callback runs, so none runs after close. */
    GMutex lock;
    int closed;
    /* The unique name owning org.freedesktop.login1, or NULL when nobody owns it on this bus. */
    gchar *logind_owner;
};

static void take_error(GError *e, char **err, const char *fallback) {
    if (err) *err = g_strdup(e ? e->message : fallback);
    if (e) g_error_free(e);
}

/* Adds a match rule so the bus routes these broadcast signals to this connection. */
static int add_match(GDBusConnection *c, const char *rule, char **err) {
    GError *e = NULL;
    GVariant *r = g_dbus_connection_call_sync(c, "org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus", "AddMatch", g_variant_new("(s)", rule), NULL,
        G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &e);
    if (!r) { take_error(e, err, "AddMatch failed"); return -1; }
    g_variant_unref(r);
    return 0;
}

static gchar *name_owner(GDBusConnection *c, const char *name) {
    GVariant *r = g_dbus_connection_call_sync(c, "org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus", "GetNameOwner", g_variant_new("(s)", name), G_VARIANT_TYPE("(s)"),
        G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL);
    if (!r) return NULL;
    gchar *owner = NULL;
    g_variant_get(r, "(s)", &owner);
    g_variant_unref(r);
    return owner;
}

static int is(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Runs on GDBus's worker thread for every incoming message; passes the message on unchanged. */
static GDBusMessage *filter(GDBusConnection *c, GDBusMessage *m, gboolean incoming, gpointer data) {
    (void)c;
    struct CGioShims_bus *b = data;
    if (!incoming || g_dbus_message_get_message_type(m) != G_DBUS_MESSAGE_TYPE_SIGNAL) return m;
    const char *iface = g_dbus_message_get_interface(m), *member = g_dbus_message_get_member(m);
    const char *path = g_dbus_message_get_path(m), *sender = g_dbus_message_get_sender(m);
    GVariant *body = g_dbus_message_get_body(m);
    int kind = 0, flag = 0;
    g_mutex_lock(&b->lock);
    if (b->closed) { g_mutex_unlock(&b->lock); return m; }
    if (is(iface, "org.freedesktop.DBus") && is(member, "NameOwnerChanged") && body &&
        g_variant_is_of_type(body, G_VARIANT_TYPE("(sss)"))) {
        const char *name = NULL, *old_owner = NULL, *new_owner = NULL;
        g_variant_get(body, "(&s&s&s)", &name, &old_owner, &new_owner);
        if (is(name, LOGIND)) {
            g_free(b->logind_owner);
            b->logind_owner = new_owner && *new_owner ? g_strdup(new_owner) : NULL;
        }
    } else if (b->system && (is(iface, LOGIND ".Session") || is(iface, LOGIND ".Manager"))) {
        /* While logind owns its name on this bus, only logind speaks for it. */
        int trusted = b->logind_owner == NULL || is(sender, b->logind_owner);
        if (trusted && is(iface, LOGIND ".Session") && is(member, "Lock")) {
            kind = CGioShims_BUS_SESSION_LOCK;
        } else if (trusted && is(member, "PrepareForSleep") && body && g_variant_is_of_type(body, G_VARIANT_TYPE("(b)"))) {
            gboolean v = FALSE;
            g_variant_get(body, "(b)", &v);
            kind = CGioShims_BUS_PREPARE_FOR_SLEEP; flag = v ? 1 : 0;
        }
    } else if (b->system && is(iface, "org.freedesktop.NetworkManager") && is(member, "StateChanged")) {
        kind = CGioShims_BUS_NETWORK;
    } else if (!b->system && (is(iface, "org.freedesktop.ScreenSaver") || is(iface, "org.gnome.ScreenSaver")) &&
               is(member, "ActiveChanged") && body && g_variant_is_of_type(body, G_VARIANT_TYPE("(b)"))) {
        gboolean v = FALSE;
        g_variant_get(body, "(b)", &v);
        kind = CGioShims_BUS_SCREENSAVER; flag = v ? 1 : 0;
    }
    if (kind) b->callback(b->context, kind, flag, path ? path : "");
    g_mutex_unlock(&b->lock);
    return m;
}

CGioShims_bus *CGioShims_bus_open(const char *address, int system, CGioShims_bus_callback callback, void *context, char **err) {
    GError *e = NULL;
    gchar *addr = address ? g_strdup(address)
        : g_dbus_address_get_for_bus_sync(system ? G_BUS_TYPE_SYSTEM : G_BUS_TYPE_SESSION, NULL, &e);
    if (!addr) { take_error(e, err, "no bus address"); return NULL; }
    GDBusConnection *c = g_dbus_connection_new_for_address_sync(addr,
        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
        NULL, NULL, &e);
    g_free(addr);
    if (!c) { take_error(e, err, "cannot connect to the bus"); return NULL; }
    g_dbus_connection_set_exit_on_close(c, FALSE);
    struct CGioShims_bus *b = g_new0(struct CGioShims_bus, 1);
    b->connection = c; b->system = system; b->callback = callback; b->context = context;
    g_mutex_init(&b->lock);
    static const char *system_rules[] = {
        "type='signal',interface='org.freedesktop.login1.Session',member='Lock'",
        "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'",
        "type='signal',interface='org.freedesktop.NetworkManager',member='StateChanged'",
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.freedesktop.login1'",
        NULL };
    static const char *session_rules[] = {
        "type='signal',interface='org.freedesktop.ScreenSaver',member='ActiveChanged'",
        "type='signal',interface='org.gnome.ScreenSaver',member='ActiveChanged'",
        NULL };
    g_dbus_connection_add_filter(c, filter, b, NULL);
    for (const char **r = system ? system_rules : session_rules; *r; r++) {
        if (add_match(c, *r, err) != 0) { CGioShims_bus_close(b); return NULL; }
    }
    if (system) {
        gchar *owner = name_owner(c, LOGIND);
        g_mutex_lock(&b->lock);
        if (!b->logind_owner) b->logind_owner = owner; else g_free(owner);
        g_mutex_unlock(&b->lock);
    }
    return b;
}

int CGioShims_bus_session_is_users(CGioShims_bus *b, const char *path, unsigned int uid, char **err) {
    GError *e = NULL;
    GVariant *r = g_dbus_connection_call_sync(b->connection, LOGIND, path, "org.freedesktop.DBus.Properties", "Get",
        g_variant_new("(ss)", LOGIND ".Session", "User"), G_VARIANT_TYPE("(v)"),
        G_DBUS_CALL_FLAGS_NO_AUTO_START, 2000, NULL, &e);
    if (!r) { take_error(e, err, "no answer"); return -1; }
    GVariant *v = NULL;
    g_variant_get(r, "(v)", &v);
    int result = -1;
    if (g_variant_is_of_type(v, G_VARIANT_TYPE("(uo)"))) {
        guint32 owner = 0;
        g_variant_get(v, "(u&o)", &owner, NULL);
        result = owner == uid ? 1 : 0;
    } else if (err) {
        *err = g_strdup("unexpected type of the session's User property");
    }
    g_variant_unref(v);
    g_variant_unref(r);
    return result;
}

int CGioShims_bus_inhibit_sleep(CGioShims_bus *b, const char *who, const char *why, char **err) {
    GError *e = NULL;
    GUnixFDList *fds = NULL;
    GVariant *r = g_dbus_connection_call_with_unix_fd_list_sync(b->connection, LOGIND, "/org/freedesktop/login1",
        LOGIND ".Manager", "Inhibit", g_variant_new("(ssss)", "sleep", who, why, "delay"), G_VARIANT_TYPE("(h)"),
        G_DBUS_CALL_FLAGS_NO_AUTO_START, 2000, NULL, &fds, NULL, &e);
    if (!r) { take_error(e, err, "no answer"); return -1; }
    gint32 index = -1;
    g_variant_get(r, "(h)", &index);
    g_variant_unref(r);
    int fd = fds ? g_unix_fd_list_get(fds, index, &e) : -1;
    if (fds) g_object_unref(fds);
    if (fd < 0) { take_error(e, err, "no descriptor in the answer"); return -1; }
    return fd;
}

int CGioShims_bus_is_connected(CGioShims_bus *b) { return b && !g_dbus_connection_is_closed(b->connection); }

void CGioShims_bus_close(CGioShims_bus *b) {
    if (!b) return;
    g_mutex_lock(&b->lock);
    int was_closed = b->closed;
    b->closed = 1;
    g_mutex_unlock(&b->lock);
    if (was_closed) return;
    g_dbus_connection_close_sync(b->connection, NULL, NULL);
    /* The record itself is kept: GDBus's worker may still be entering the filter, which then
       finds `closed` set. An agent closes its buses once, at exit. */
}

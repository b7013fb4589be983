#include "CGioShims.h"
#include <gio/gio.h>

int CGioShims_nm_metered(unsigned int *out, char **err) {
    GError *e = NULL;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, &e);
    if (!bus) { if (err) *err = g_strdup(e ? e->message : "no system bus"); if (e) g_error_free(e); return -1; }
    GVariant *r = g_dbus_connection_call_sync(bus, "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
        "org.freedesktop.DBus.Properties", "Get",
        g_variant_new("(ss)", "org.freedesktop.NetworkManager", "Metered"),
        G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, 2000, NULL, &e);
    g_object_unref(bus);
    if (!r) { if (err) *err = g_strdup(e ? e->message : "no NetworkManager"); if (e) g_error_free(e); return -1; }
    GVariant *v = NULL;
    g_variant_get(r, "(v)", &v);
    *out = g_variant_is_of_type(v, G_VARIANT_TYPE_UINT32) ? g_variant_get_uint32(v) : 0;
    g_variant_unref(v);
    g_variant_unref(r);
    return 0;
}

void CGioShims_free(char *p) { g_free(p); }

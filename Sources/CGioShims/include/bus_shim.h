#pragma once

/// What a bus watch reports (the `kind` argument of the callback).
enum {
    /// logind `org.freedesktop.login1.Session.Lock` on a session object (`path`).
    CGioShims_BUS_SESSION_LOCK = 1,
    /// logind `org.freedesktop.login1.Manager.PrepareForSleep(b)`: `flag` 1 before sleep, 0 after.
    CGioShims_BUS_PREPARE_FOR_SLEEP = 2,
    /// `org.freedesktop.ScreenSaver.ActiveChanged(b)` (or `org.gnome.ScreenSaver`): `flag` 1 = active.
    CGioShims_BUS_SCREENSAVER = 3,
    /// NetworkManager's `StateChanged` (connectivity or metered state may have changed).
    CGioShims_BUS_NETWORK = 4,
};

/// Called on GDBus's worker thread for each signal a watch matches; `path` is the object path
/// (valid during the call only). The callee must return quickly and be thread-safe.
typedef void (*CGioShims_bus_callback)(void *context, int kind, int flag, const char *path);

typedef struct CGioShims_bus CGioShims_bus;

/// Connects to a message bus and watches its signals: on the system bus (`system` = 1) logind's
/// `Session.Lock` and `Manager.PrepareForSleep` and NetworkManager's `StateChanged`; on a session
/// bus the ScreenSaver `ActiveChanged`. `address` NULL means this login's bus of that kind. The
/// connection is private and never ends the process when the bus goes away. While a name owner
/// for `org.freedesktop.login1` exists, logind signals are taken only from that owner. Returns
/// NULL with a message in `*err` (free with CGioShims_free) when the bus cannot be reached.
CGioShims_bus *CGioShims_bus_open(const char *address, int system, CGioShims_bus_callback callback, void *context, char **err);

/// Whether logind on this bus says the session object `path` belongs to `uid`: 1 yes, 0 no,
/// -1 it cannot tell (no logind, no such session; message in `*err`).
int CGioShims_bus_session_is_users(CGioShims_bus *bus, const char *path, unsigned int uid, char **err);

/// Takes a logind delay inhibitor for sleep (`Inhibit("sleep", who, why, "delay")`): returns its
/// file descriptor (close it to release), or -1 with a message in `*err`.
int CGioShims_bus_inhibit_sleep(CGioShims_bus *bus, const char *who, const char *why, char **err);

/// 1 while the connection is open.
int CGioShims_bus_is_connected(CGioShims_bus *bus);

/// Stops watching and closes the connection. No callback runs after this returns.
void CGioShims_bus_close(CGioShims_bus *bus);

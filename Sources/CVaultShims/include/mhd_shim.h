#pragma once
// libmicrohttpd wrappers (filled in by the server).

#pragma once
// libcurl typed setopt wrappers (filled in by the transfer layer).

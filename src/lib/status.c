/*
 * status.c - status code names and the library version.
 */
#include "memtrace/memtrace.h"

const char *mt_status_name(int status)
{
    switch (status) {
    case MT_OK: return "MT_OK";
    case MT_EOF: return "MT_EOF";
    case MT_ERR_FORMAT: return "MT_ERR_FORMAT";
    case MT_ERR_TRUNCATED: return "MT_ERR_TRUNCATED";
    case MT_ERR_IO: return "MT_ERR_IO";
    case MT_ERR_NOMEM: return "MT_ERR_NOMEM";
    case MT_ERR_ARG: return "MT_ERR_ARG";
    case MT_ERR_LOCATION: return "MT_ERR_LOCATION";
    case MT_ERR_PID_CHANGED: return "MT_ERR_PID_CHANGED";
    case MT_ERR_UNSUPPORTED: return "MT_ERR_UNSUPPORTED";
    default: return "MT_ERR_UNKNOWN";
    }
}

const char *mt_version(void)
{
    return MT_VERSION_STRING;
}

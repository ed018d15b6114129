/* ZEX_experimental_debug_event_notifier: a driver extension of libze_zesim.so.1 for
 * program debuggers (driver/README.md, "Program debugging"; issue 14 item 5).
 *
 * A debugger that waits on more than the debug session (its own sockets, a terminal,
 * several sessions) wants a file descriptor to poll instead of blocking in
 * zetDebugReadEvent.  zexDebugGetEventNotifierExp returns one for a session: it is
 * readable (POLLIN) exactly while the session has events that zetDebugReadEvent has not
 * returned yet.  The tool must not read or write it (only poll/select/epoll); it
 * belongs to the session and is closed by zetDebugDetach.  Events are the session's
 * own: each is returned once by zetDebugReadEvent, in order, whether or not the tool
 * polls.
 *
 * Find it with zeDriverGetExtensionProperties (ZEX_DEBUG_EVENT_NOTIFIER_EXP_NAME) and
 * zeDriverGetExtensionFunctionAddress (ZEX_DEBUG_GET_EVENT_NOTIFIER_EXP_NAME). */
#ifndef ZEX_DEBUG_NOTIFIER_H
#define ZEX_DEBUG_NOTIFIER_H

#include <level_zero/zet_api.h>

#define ZEX_DEBUG_EVENT_NOTIFIER_EXP_NAME "ZEX_experimental_debug_event_notifier"
#define ZEX_DEBUG_EVENT_NOTIFIER_EXP_VERSION ZE_MAKE_VERSION(1, 0)
#define ZEX_DEBUG_GET_EVENT_NOTIFIER_EXP_NAME "zexDebugGetEventNotifierExp"

/* *pFd: the session's notifier.  ZE_RESULT_ERROR_INVALID_NULL_HANDLE for a handle
 * that is no live session, ZE_RESULT_ERROR_INVALID_NULL_POINTER for a NULL pFd. */
typedef ze_result_t(ZE_APICALL *zex_pfnDebugGetEventNotifierExp_t)(zet_debug_session_handle_t hDebug, int *pFd);

/* Register-set types of this device (the numbering of Intel's
 * zet_debug_regset_type_intel_gpu_t, which the 1.8 headers do not ship). */
enum {
	ZEX_DEBUG_REGSET_TYPE_GRF = 1,
	ZEX_DEBUG_REGSET_TYPE_ADDR = 2,
	ZEX_DEBUG_REGSET_TYPE_FLAG = 3,
	ZEX_DEBUG_REGSET_TYPE_CE = 4,
	ZEX_DEBUG_REGSET_TYPE_SR = 5,
	ZEX_DEBUG_REGSET_TYPE_CR = 6,
	ZEX_DEBUG_REGSET_TYPE_TDR = 7,
	ZEX_DEBUG_REGSET_TYPE_ACC = 8,
	ZEX_DEBUG_REGSET_TYPE_SP = 10,
	ZEX_DEBUG_REGSET_TYPE_SBA = 11, /* the instruction base ip counts from (docs/isa.md 3.5) */
	ZEX_DEBUG_REGSET_TYPE_DBG = 12,
};

#endif

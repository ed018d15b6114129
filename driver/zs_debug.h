/* Program debugging (driver/README.md "Program debugging", docs/debug.md section 4):
 * the zet debug API of a debugger process on the KMD's debug connection, and the
 * target side (module metadata, the ack before a module's first launch).  Both are on
 * only with ZET_ENABLE_PROGRAM_DEBUGGING=1 at zeInit. */
#ifndef ZS_DEBUG_H
#define ZS_DEBUG_H

#include <level_zero/zet_api.h>

#include "zs_driver.h"

struct zs_module;

void zs_debug_init(zs_device_t *dev);
bool zs_debug_enabled(void);

/* The target side: a module's code was loaded / is unloaded; its first launch
 * waits for the ack fence (a module loaded with debugging off never waits). */
ze_result_t zs_debug_module_loaded(struct zs_module *mod);
void zs_debug_module_unloaded(struct zs_module *mod);
ze_result_t zs_debug_module_wait(struct zs_module *mod);

ze_result_t ZE_APICALL zs_device_get_debug_properties(zet_device_handle_t hDevice,
						      zet_device_debug_properties_t *pDebugProperties);
ze_result_t ZE_APICALL zs_debug_attach(zet_device_handle_t hDevice, const zet_debug_config_t *config,
				       zet_debug_session_handle_t *phDebug);
ze_result_t ZE_APICALL zs_debug_detach(zet_debug_session_handle_t hDebug);
ze_result_t ZE_APICALL zs_debug_read_event(zet_debug_session_handle_t hDebug, uint64_t timeout,
					   zet_debug_event_t *event);
ze_result_t ZE_APICALL zs_debug_acknowledge_event(zet_debug_session_handle_t hDebug, const zet_debug_event_t *event);
ze_result_t ZE_APICALL zs_debug_interrupt(zet_debug_session_handle_t hDebug, ze_device_thread_t thread);
ze_result_t ZE_APICALL zs_debug_resume(zet_debug_session_handle_t hDebug, ze_device_thread_t thread);
ze_result_t ZE_APICALL zs_debug_read_memory(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
					    const zet_debug_memory_space_desc_t *desc, size_t size, void *buffer);
ze_result_t ZE_APICALL zs_debug_write_memory(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
					     const zet_debug_memory_space_desc_t *desc, size_t size, const void *buffer);
ze_result_t ZE_APICALL zs_debug_get_register_set_properties(zet_device_handle_t hDevice, uint32_t *pCount,
							    zet_debug_regset_properties_t *pRegisterSetProperties);
ze_result_t ZE_APICALL zs_debug_read_registers(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
					       uint32_t type, uint32_t start, uint32_t count, void *pRegisterValues);
ze_result_t ZE_APICALL zs_debug_write_registers(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
						uint32_t type, uint32_t start, uint32_t count, void *pRegisterValues);
/* ZEX_experimental_debug_event_notifier */
ze_result_t ZE_APICALL zs_debug_get_event_notifier(zet_debug_session_handle_t hDebug, int *pFd);

#endif

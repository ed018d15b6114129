/* Command lists, regular and immediate.  A list encodes batch-buffer
 * commands (docs/commands.md) on the host; the data they point at (kernel
 * argument areas, fill patterns) goes into GPU memory chunks owned by the
 * list.  Closing a regular list copies the commands, ending with BATCH_END,
 * into GPU memory: the batch a queue submits.  An immediate list submits each
 * append as its own batch on its own queue, recycling chunks once the
 * queue's timeline shows they are no longer read. */
#ifndef ZS_CMDLIST_H
#define ZS_CMDLIST_H

#include <stdbool.h>

#include <level_zero/ze_api.h>

#include "zs_context.h"
#include "zs_hostop.h"
#include "zs_queue.h"

typedef struct zs_chunk {
	zs_bo_t bo;
	uint64_t used;
	uint64_t retire; /* immediate lists: timeline value after which it is free */
	struct zs_chunk *next;
} zs_chunk_t;

typedef struct zs_cmdlist {
	zs_context_t *ctx;
	zs_device_t *dev;
	uint32_t ordinal;
	ze_command_list_flags_t flags;
	bool immediate;
	zs_queue_t *queue; /* immediate lists only */
	bool closed;
	uint64_t batch_va; /* closed regular list: its batch */

	uint32_t *cmd; /* commands being encoded */
	size_t ncmd, capcmd;

	const void *oa_group; /* metric group of OA query reports in the list (zs_metrics.c), or NULL */

	zs_chunk_t *cur;  /* chunk being filled */
	zs_chunk_t *used; /* other chunks holding data of this list (or in flight) */
	zs_chunk_t *free; /* chunks ready for reuse */

	/* Host operations (zs_hostop.h) of the commands encoded, in batch
	 * order: a queue's worker gets them when the batch is submitted. */
	zs_hostop_t *hostops;
	size_t nhostops, caphostops;
} zs_cmdlist_t;

/* For the metrics code (zs_metrics.c): one operation made of the commands dw[0..n) between
 * its waits and its signal, flushed at once on an immediate list.  oa_group: the metric
 * group whose OA counters the commands report (REPORT_PERF_COUNT), else NULL; a list with
 * such commands needs the OA query stream when it executes (zs_metrics_query_prepare). */
ze_result_t zs_cmdlist_append_commands(ze_command_list_handle_t h, const uint32_t *dw, size_t n, const void *oa_group,
				       ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait);

/* For zeCommandQueueExecuteCommandLists: the batch of a closed regular list. */
ze_result_t zs_cmdlist_batch_for(const zs_cmdlist_t *cl, const zs_queue_t *q, uint64_t *batch_va);

ze_result_t ZE_APICALL zs_command_list_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					      const ze_command_list_desc_t *desc,
					      ze_command_list_handle_t *phCommandList);
ze_result_t ZE_APICALL zs_command_list_create_immediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
							const ze_command_queue_desc_t *altdesc,
							ze_command_list_handle_t *phCommandList);
ze_result_t ZE_APICALL zs_command_list_destroy(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL zs_command_list_close(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL zs_command_list_reset(ze_command_list_handle_t hCommandList);
ze_result_t ZE_APICALL zs_command_list_append_write_global_timestamp(ze_command_list_handle_t hCommandList,
								     uint64_t *dstptr, ze_event_handle_t hSignalEvent,
								     uint32_t numWaitEvents,
								     ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_barrier(ze_command_list_handle_t hCommandList,
						      ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
						      ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_memory_ranges_barrier(ze_command_list_handle_t hCommandList,
								    uint32_t numRanges, const size_t *pRangeSizes,
								    const void **pRanges,
								    ze_event_handle_t hSignalEvent,
								    uint32_t numWaitEvents,
								    ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_memory_copy(ze_command_list_handle_t hCommandList, void *dstptr,
							  const void *srcptr, size_t size,
							  ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							  ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_memory_fill(ze_command_list_handle_t hCommandList, void *ptr,
							  const void *pattern, size_t pattern_size, size_t size,
							  ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							  ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_memory_copy_region(
	ze_command_list_handle_t hCommandList, void *dstptr, const ze_copy_region_t *dstRegion, uint32_t dstPitch,
	uint32_t dstSlicePitch, const void *srcptr, const ze_copy_region_t *srcRegion, uint32_t srcPitch,
	uint32_t srcSlicePitch, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
	ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_memory_copy_from_context(
	ze_command_list_handle_t hCommandList, void *dstptr, ze_context_handle_t hContextSrc, const void *srcptr,
	size_t size, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_memory_prefetch(ze_command_list_handle_t hCommandList,
							      const void *ptr, size_t size);
ze_result_t ZE_APICALL zs_command_list_append_mem_advise(ze_command_list_handle_t hCommandList,
							 ze_device_handle_t hDevice, const void *ptr, size_t size,
							 ze_memory_advice_t advice);
ze_result_t ZE_APICALL zs_command_list_append_signal_event(ze_command_list_handle_t hCommandList,
							   ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zs_command_list_append_wait_on_events(ze_command_list_handle_t hCommandList,
							     uint32_t numEvents, ze_event_handle_t *phEvents);
ze_result_t ZE_APICALL zs_command_list_append_event_reset(ze_command_list_handle_t hCommandList,
							  ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zs_command_list_append_query_kernel_timestamps(
	ze_command_list_handle_t hCommandList, uint32_t numEvents, ze_event_handle_t *phEvents, void *dstptr,
	const size_t *pOffsets, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
	ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_launch_kernel(ze_command_list_handle_t hCommandList,
							    ze_kernel_handle_t hKernel,
							    const ze_group_count_t *pLaunchFuncArgs,
							    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							    ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_launch_cooperative_kernel(ze_command_list_handle_t hCommandList,
									ze_kernel_handle_t hKernel,
									const ze_group_count_t *pLaunchFuncArgs,
									ze_event_handle_t hSignalEvent,
									uint32_t numWaitEvents,
									ze_event_handle_t *phWaitEvents);

#endif

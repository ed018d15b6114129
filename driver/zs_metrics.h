/* The Level Zero metrics API (zet metric groups, streamers, queries; docs/metrics.md,
 * driver/README.md "Metrics").  Enabled by ZET_ENABLE_METRICS=1 at zeInit; otherwise every
 * entry point returns ZE_RESULT_ERROR_UNINITIALIZED. */
#ifndef ZS_METRICS_H
#define ZS_METRICS_H

#include <level_zero/zet_api.h>

#include "zs_driver.h"

/* At zeInit, after the device opened: reads ZET_ENABLE_METRICS and builds the groups. */
ze_result_t zs_metrics_init(zs_device_t *dev);

/* Before a batch with OA query reports of `group` runs on exec queue `exec_id`: the OA
 * counters must count with the group's programming (opens the query stream if needed). */
ze_result_t zs_metrics_query_prepare(zs_device_t *dev, uint32_t exec_id, const void *group);

ze_result_t ZE_APICALL zs_metric_group_get(zet_device_handle_t hDevice, uint32_t *pCount,
					   zet_metric_group_handle_t *phMetricGroups);
ze_result_t ZE_APICALL zs_metric_group_get_properties(zet_metric_group_handle_t hMetricGroup,
						      zet_metric_group_properties_t *pProperties);
ze_result_t ZE_APICALL zs_metric_group_calculate_metric_values(zet_metric_group_handle_t hMetricGroup,
							       zet_metric_group_calculation_type_t type,
							       size_t rawDataSize, const uint8_t *pRawData,
							       uint32_t *pMetricValueCount,
							       zet_typed_value_t *pMetricValues);
ze_result_t ZE_APICALL zs_metric_group_calculate_multiple_metric_values_exp(
	zet_metric_group_handle_t hMetricGroup, zet_metric_group_calculation_type_t type, size_t rawDataSize,
	const uint8_t *pRawData, uint32_t *pSetCount, uint32_t *pTotalMetricValueCount, uint32_t *pMetricCounts,
	zet_typed_value_t *pMetricValues);
ze_result_t ZE_APICALL zs_metric_get(zet_metric_group_handle_t hMetricGroup, uint32_t *pCount,
				     zet_metric_handle_t *phMetrics);
ze_result_t ZE_APICALL zs_metric_get_properties(zet_metric_handle_t hMetric, zet_metric_properties_t *pProperties);
ze_result_t ZE_APICALL zs_context_activate_metric_groups(zet_context_handle_t hContext, zet_device_handle_t hDevice,
							 uint32_t count, zet_metric_group_handle_t *phMetricGroups);
ze_result_t ZE_APICALL zs_metric_streamer_open(zet_context_handle_t hContext, zet_device_handle_t hDevice,
					       zet_metric_group_handle_t hMetricGroup, zet_metric_streamer_desc_t *desc,
					       ze_event_handle_t hNotificationEvent,
					       zet_metric_streamer_handle_t *phMetricStreamer);
ze_result_t ZE_APICALL zs_metric_streamer_close(zet_metric_streamer_handle_t hMetricStreamer);
ze_result_t ZE_APICALL zs_metric_streamer_read_data(zet_metric_streamer_handle_t hMetricStreamer,
						    uint32_t maxReportCount, size_t *pRawDataSize, uint8_t *pRawData);
ze_result_t ZE_APICALL zs_command_list_append_metric_streamer_marker(zet_command_list_handle_t hCommandList,
								     zet_metric_streamer_handle_t hMetricStreamer,
								     uint32_t value);
ze_result_t ZE_APICALL zs_metric_query_pool_create(zet_context_handle_t hContext, zet_device_handle_t hDevice,
						   zet_metric_group_handle_t hMetricGroup,
						   const zet_metric_query_pool_desc_t *desc,
						   zet_metric_query_pool_handle_t *phMetricQueryPool);
ze_result_t ZE_APICALL zs_metric_query_pool_destroy(zet_metric_query_pool_handle_t hMetricQueryPool);
ze_result_t ZE_APICALL zs_metric_query_create(zet_metric_query_pool_handle_t hMetricQueryPool, uint32_t index,
					      zet_metric_query_handle_t *phMetricQuery);
ze_result_t ZE_APICALL zs_metric_query_destroy(zet_metric_query_handle_t hMetricQuery);
ze_result_t ZE_APICALL zs_metric_query_reset(zet_metric_query_handle_t hMetricQuery);
ze_result_t ZE_APICALL zs_metric_query_get_data(zet_metric_query_handle_t hMetricQuery, size_t *pRawDataSize,
						uint8_t *pRawData);
ze_result_t ZE_APICALL zs_command_list_append_metric_query_begin(zet_command_list_handle_t hCommandList,
								 zet_metric_query_handle_t hMetricQuery);
ze_result_t ZE_APICALL zs_command_list_append_metric_query_end(zet_command_list_handle_t hCommandList,
							       zet_metric_query_handle_t hMetricQuery,
							       ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							       ze_event_handle_t *phWaitEvents);
ze_result_t ZE_APICALL zs_command_list_append_metric_memory_barrier(zet_command_list_handle_t hCommandList);

#endif

/* Virtual memory (zeVirtualMem*, zePhysicalMem*): reserved GPU address ranges
 * into which physical memory objects (GEM objects) are mapped with the KMD's
 * VM bind; the access attributes are the page tables' (driver/README.md
 * "Virtual memory"). */
#ifndef ZS_VMEM_H
#define ZS_VMEM_H

#include <level_zero/ze_api.h>

/* The page size zeVirtualMemQueryPageSize reports: reservations, physical
 * sizes, mapping addresses, sizes and offsets are multiples of it. */
#define ZS_VMEM_PAGE (64u << 10)

/* Where [p, p + n) lies: 1 inside one reservation (device memory for commands:
 * the GPU reaches it through the page tables, so the access attributes apply),
 * 0 in none, -1 partly in one. */
int zs_vmem_range(const void *p, uint64_t n);

ze_result_t ZE_APICALL zs_virtual_mem_reserve(ze_context_handle_t hContext, const void *pStart, size_t size,
					      void **pptr);
ze_result_t ZE_APICALL zs_virtual_mem_free(ze_context_handle_t hContext, const void *ptr, size_t size);
ze_result_t ZE_APICALL zs_virtual_mem_query_page_size(ze_context_handle_t hContext, ze_device_handle_t hDevice,
						      size_t size, size_t *pagesize);
ze_result_t ZE_APICALL zs_virtual_mem_map(ze_context_handle_t hContext, const void *ptr, size_t size,
					  ze_physical_mem_handle_t hPhysicalMemory, size_t offset,
					  ze_memory_access_attribute_t access);
ze_result_t ZE_APICALL zs_virtual_mem_unmap(ze_context_handle_t hContext, const void *ptr, size_t size);
ze_result_t ZE_APICALL zs_virtual_mem_set_access_attribute(ze_context_handle_t hContext, const void *ptr,
							   size_t size, ze_memory_access_attribute_t access);
ze_result_t ZE_APICALL zs_virtual_mem_get_access_attribute(ze_context_handle_t hContext, const void *ptr,
							   size_t size, ze_memory_access_attribute_t *access,
							   size_t *outSize);
ze_result_t ZE_APICALL zs_physical_mem_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					      ze_physical_mem_desc_t *desc,
					      ze_physical_mem_handle_t *phPhysicalMemory);
ze_result_t ZE_APICALL zs_physical_mem_destroy(ze_context_handle_t hContext,
					       ze_physical_mem_handle_t hPhysicalMemory);

#endif

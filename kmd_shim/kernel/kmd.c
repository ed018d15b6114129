/* The fake KMD: the device and its DRM files (docs/kmd.md §1, §9, §10). */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void program_ring(zs_hw_t *hw)
{
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_RESET, 1);
	zs_hw_mmio_write(hw, ZS_REG_RING_BASE_LO, (uint32_t)RING_PA);
	zs_hw_mmio_write(hw, ZS_REG_RING_BASE_HI, 0);
	zs_hw_mmio_write(hw, ZS_REG_RING_SIZE, RING_SIZE);
	zs_hw_mmio_write(hw, ZS_REG_RING_TAIL, 0);
	zs_hw_mmio_write(hw, ZS_REG_RING_CTL, 1);
}

zk_kmd_t *zk_create(zs_hw_t *hw)
{
	if (zk_ioctl_table_check())
		return NULL;
	zk_kmd_t *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->hw = hw;
	if (zs_hw_mmio_read(hw, ZS_REG_GT_ID) != 0x5a455349u || zs_hw_mmio_read(hw, ZS_REG_GT_VERSION) != 3) {
		free(k);
		return NULL; /* not the device (or register map version) this KMD drives */
	}
	k->phys = zs_hw_phys(hw, &k->phys_size);
	uint32_t topo = zs_hw_mmio_read(hw, ZS_REG_GT_TOPOLOGY);
	k->slices = ZS_FIELD_GET(topo, GT_TOPOLOGY, SLICES);
	k->subslices = ZS_FIELD_GET(topo, GT_TOPOLOGY, SUBSLICES);
	k->eus = ZS_FIELD_GET(topo, GT_TOPOLOGY, EUS);
	k->threads = ZS_FIELD_GET(topo, GT_TOPOLOGY, THREADS);
	k->core_mhz = zs_hw_mmio_read(hw, ZS_REG_GT_CORE_MHZ);
	k->ts_khz = zs_hw_mmio_read(hw, ZS_REG_GT_TIMESTAMP_KHZ);
	k->slm_kb = zs_hw_mmio_read(hw, ZS_REG_GT_SLM_KB);
	k->free = malloc(sizeof(extent_t));
	if (!k->free) {
		free(k);
		return NULL;
	}
	k->free[0] = (extent_t){PHYS_RESERVED, k->phys_size - PHYS_RESERVED};
	k->nfree = 1;
	k->prime_fd = -1;
	k->st.free_bytes = k->phys_size - PHYS_RESERVED;
	k->job_timeout_ns = ZK_DEFAULT_JOB_TIMEOUT_MS * 1000000ull;
	k->timeslice_cycles = ZK_DEFAULT_TIMESLICE_CYCLES;
	k->limits = (zk_limits_t){.bos_per_file = ZK_DEFAULT_MAX_BOS_PER_FILE,
				  .bytes_per_file = k->phys_size / 2,
				  .vms_per_file = ZK_DEFAULT_MAX_VMS_PER_FILE,
				  .queues_per_file = ZK_DEFAULT_MAX_QUEUES_PER_FILE};
	if (zk_oa_init(k) || zk_debug_init(k)) {
		zk_oa_fini(k);
		free(k->free);
		free(k);
		return NULL;
	}
	program_ring(hw);
	zk_set_fault_mode(k, ZK_FAULT_FAIL);
	zs_hw_set_irq_handler(hw, zk_irq_handler, k);
	zs_hw_mmio_write(hw, ZS_REG_IRQ_ENABLE,
			 ZS_IRQ_ENGINE_ERROR | ZS_IRQ_PAGE_FAULT | ZS_IRQ_ENGINE_IDLE |
				 (zk_oa_present(k) ? ZS_IRQ_OA_BUFFER : 0));
	return k;
}

void zk_destroy(zk_kmd_t *k)
{
	zs_hw_set_irq_handler(k->hw, NULL, NULL);
	while (k->nfiles)
		zk_close(k->files[0]);
	zk_fds_fini(k);
	zk_oa_fini(k);
	zk_debug_fini(k);
	free(k->files);
	free(k->free);
	free(k);
}

zk_file_t *zk_open(zk_kmd_t *k, int pid)
{
	zk_file_t *f = calloc(1, sizeof(*f));
	zk_file_t **nf = realloc(k->files, (k->nfiles + 1) * sizeof(*nf));
	if (!f || !nf) {
		free(f);
		if (nf)
			k->files = nf;
		return NULL;
	}
	k->files = nf;
	f->kmd = k;
	f->pid = pid;
	f->next_mmap = 1ull << 32;
	f->job_timeout_ns = ~0ull;
	k->files[k->nfiles++] = f;
	k->st.files++;
	zk_debug_file_opened(f);
	return f;
}

void zk_close(zk_file_t *f)
{
	zk_kmd_t *k = f->kmd;
	zk_fds_file_closed(k, f); /* its fds hang up (fds.c) */
	zk_debug_file_closing(f); /* destroy events, detach its debugger (debug.c) */
	/* Cancel its queued jobs, and its running job with an engine reset. */
	zk_cancel_queued(k, NULL, f);
	if (k->running && k->running->file == f) {
		zk_reset_engine(k);
		zk_job_free(k, k->running);
		k->running = NULL;
		k->st.jobs_cancelled++;
	}
	for (uint32_t i = 0; i < f->queues.n; i++)
		if (f->queues.slot[i])
			zk_queue_unref(k, f->queues.slot[i]);
	for (uint32_t i = 0; i < f->vms.n; i++)
		if (f->vms.slot[i])
			zk_vm_unref(k, f->vms.slot[i]);
	for (uint32_t i = 0; i < f->bos.n; i++)
		if (f->bos.slot[i])
			zk_bo_unref(k, f->bos.slot[i]);
	zk_bos_file_closed(k, f); /* objects other files imported outlive it */
	free(f->queues.slot);
	free(f->vms.slot);
	free(f->bos.slot);
	for (size_t i = 0; i < k->nfiles; i++)
		if (k->files[i] == f) {
			k->files[i] = k->files[--k->nfiles];
			break;
		}
	k->st.files--;
	free(f);
	zk_service(k);
}

void zk_get_stats(zk_kmd_t *k, zk_stats_t *out) { *out = k->st; }

void zk_set_fault_mode(zk_kmd_t *k, zk_fault_mode_t mode)
{
	k->fault_mode = mode;
	/* Failing a job must also stop its batch: no later command, no fence. */
	zs_hw_mmio_write(k->hw, ZS_REG_FAULT_CTL, ZS_FIELD_PREP(FAULT_CTL, HALT, mode == ZK_FAULT_FAIL));
}

void zk_set_job_timeout(zk_kmd_t *k, uint32_t ms) { k->job_timeout_ns = ms * 1000000ull; }

void zk_set_file_job_timeout(zk_file_t *f, uint32_t ms) { f->job_timeout_ns = ms * 1000000ull; }

void zk_set_timeslice(zk_kmd_t *k, uint64_t cycles) { k->timeslice_cycles = cycles; }

void zk_set_limits(zk_kmd_t *k, const zk_limits_t *l) { k->limits = *l; }

void zk_get_limits(zk_kmd_t *k, zk_limits_t *out) { *out = k->limits; }

void zk_set_clock(zk_kmd_t *k, uint64_t (*now)(void *ctx), void *ctx)
{
	k->clock = now;
	k->clock_ctx = ctx;
	if (k->running)
		k->charged_at = zk_now_ns(k);
}


void zk_reclaim_engine(zk_kmd_t *k)
{
	program_ring(k->hw);
	k->ring_tail = 0;
}

/* VERSION and DEVICE_QUERY (docs/uapi.md §2, §3). */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int query_size(zk_kmd_t *k, uint32_t query, uint32_t *size)
{
	switch (query) {
	case ZESIM_QUERY_ENGINES:
		*size = sizeof(struct drm_zesim_query_engines) + sizeof(struct drm_zesim_engine_class_instance);
		return 0;
	case ZESIM_QUERY_CONFIG:
		*size = sizeof(struct drm_zesim_query_config) + ZESIM_CONFIG_NUM_PARAMS * sizeof(uint64_t);
		return 0;
	case ZESIM_QUERY_GT_LIST:
		*size = sizeof(struct drm_zesim_query_gt_list) + sizeof(struct drm_zesim_gt);
		return 0;
	case ZESIM_QUERY_GT_TOPOLOGY: {
		uint32_t dss = (k->slices * k->subslices + 7) / 8, eu = (k->eus + 7) / 8;
		*size = 2 * sizeof(struct drm_zesim_query_topology_mask) + ((dss + 7) & ~7u) + ((eu + 7) & ~7u);
		return 0;
	}
	case ZESIM_QUERY_ENGINE_CYCLES:
		*size = sizeof(struct drm_zesim_query_engine_cycles);
		return 0;
	case ZESIM_QUERY_OA_UNITS:
		*size = zk_oa_units_size(k);
		return 0;
	default:
		return -EINVAL;
	}
}

uint64_t zk_read_counter(zk_kmd_t *k, uint32_t lo_reg)
{
	uint32_t lo = zs_hw_mmio_read(k->hw, lo_reg);
	uint32_t hi = zs_hw_mmio_read(k->hw, lo_reg + 4);
	return (uint64_t)hi << 32 | lo;
}

static void set_bits(uint8_t *mask, uint32_t nbits)
{
	for (uint32_t i = 0; i < nbits; i++)
		mask[i / 8] |= (uint8_t)(1u << (i % 8));
}

int zk_ioctl_device_query(ZK_IOCTL_ARGS)
{
	struct drm_zesim_device_query *q = arg;
	zk_kmd_t *k = f->kmd;
	uint32_t size;
	if (q->extensions || !CHECK_RESERVED(q))
		return -EINVAL;
	int rc = query_size(k, q->query, &size);
	if (rc)
		return rc;
	if (q->size == 0) {
		q->size = size;
		return 0;
	}
	if (q->size != size || nout < 1 || out[0].len != size || !q->data)
		return -EINVAL;
	uint8_t *d = out[0].data;
	memset(d, 0, size);
	switch (q->query) {
	case ZESIM_QUERY_ENGINES: {
		struct drm_zesim_query_engines *e = (void *)d;
		e->num_engines = 1;
		e->engines[0].engine_class = ZESIM_ENGINE_CLASS_COMPUTE;
		break;
	}
	case ZESIM_QUERY_CONFIG: {
		struct drm_zesim_query_config *c = (void *)d;
		c->num_params = ZESIM_CONFIG_NUM_PARAMS;
		c->info[ZESIM_CONFIG_REV_AND_DEVICE_ID] = ZESIM_PCI_DEVICE;
		c->info[ZESIM_CONFIG_MIN_ALIGNMENT] = PAGE;
		c->info[ZESIM_CONFIG_VA_BITS] = 47;
		c->info[ZESIM_CONFIG_THREADS_PER_EU] = k->threads;
		c->info[ZESIM_CONFIG_GRF_PER_THREAD] = 128;
		c->info[ZESIM_CONFIG_SLM_BYTES_PER_SUBSLICE] = (uint64_t)k->slm_kb * 1024;
		c->info[ZESIM_CONFIG_MAX_SIMD] = 16;
		c->info[ZESIM_CONFIG_VRAM_BYTES] = k->phys_size - PHYS_RESERVED;
		c->info[ZESIM_CONFIG_SUBSLICES_PER_SLICE] = k->subslices;
		break;
	}
	case ZESIM_QUERY_GT_LIST: {
		struct drm_zesim_query_gt_list *g = (void *)d;
		g->num_gt = 1;
		g->gt_list[0].reference_clock = k->ts_khz * 1000u;
		g->gt_list[0].core_clock = (uint64_t)k->core_mhz * 1000000u;
		break;
	}
	case ZESIM_QUERY_GT_TOPOLOGY: {
		uint32_t nss = k->slices * k->subslices;
		uint32_t dss = (nss + 7) / 8, eu = (k->eus + 7) / 8;
		struct drm_zesim_query_topology_mask *t = (void *)d;
		t->type = ZESIM_TOPO_DSS_COMPUTE;
		t->num_bytes = dss;
		set_bits(t->mask, nss);
		t = (void *)(d + sizeof(*t) + ((dss + 7) & ~7u));
		t->type = ZESIM_TOPO_EU_PER_DSS;
		t->num_bytes = eu;
		set_bits(t->mask, k->eus);
		break;
	}
	case ZESIM_QUERY_ENGINE_CYCLES: {
		struct drm_zesim_query_engine_cycles *c = (void *)d;
		if (nin < 1 || in[0].len != size)
			return -EINVAL;
		memcpy(c, in[0].data, size);
		if (c->eci.engine_class != ZESIM_ENGINE_CLASS_COMPUTE || c->eci.engine_instance || c->eci.gt_id ||
		    c->eci.pad || c->clockid != CLOCK_MONOTONIC_RAW)
			return -EINVAL;
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC_RAW, &a);
		c->engine_cycles = zk_read_counter(k, ZS_REG_GT_TIMESTAMP_LO);
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		c->width = 64;
		c->engine_frequency = k->ts_khz * 1000ull;
		c->cpu_timestamp = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
		c->cpu_delta = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
		break;
	}
	case ZESIM_QUERY_OA_UNITS:
		zk_oa_units_fill(k, d);
		break;
	}
	return 0;
}

/* Like Linux: copy what fits (no padding), report the full length. */
static int copy_string(zk_out_blob_t *out, const char *s, __kernel_size_t *len)
{
	size_t n = strlen(s);
	if (out) {
		out->len = (uint32_t)(n < out->len ? n : out->len);
		memcpy(out->data, s, out->len);
	}
	*len = n;
	return 0;
}

int zk_ioctl_version(ZK_IOCTL_ARGS)
{
	struct drm_zesim_version *v = arg;
	v->version_major = 1;
	v->version_minor = 0;
	v->version_patchlevel = 0;
	copy_string(nout > 0 ? &out[0] : NULL, ZESIM_DRIVER_NAME, &v->name_len);
	copy_string(nout > 1 ? &out[1] : NULL, "20261122", &v->date_len);
	copy_string(nout > 2 ? &out[2] : NULL, "zesim simulated Xe-style GPU", &v->desc_len);
	return 0;
}

/* Pointers stored in memory (tests/e2e/test_spirv_pointers.c): global
 * pointers loaded from buffers, structs and private arrays, then used for
 * loads, stores and atomics; pointers stored to memory. */

/* A table of pointers (pointer-to-pointer argument), chosen per work item. */
kernel void ptr_table(global int *global *tab, global const int *sel, global int *out)
{
	const int i = get_global_id(0);
	global int *p = tab[sel[i] & 3];
	out[i] = p[i] + 1;
	p[i + 64] = i; /* a store through the loaded pointer */
}

/* A struct in a buffer holding pointers and a count. */
typedef struct job {
	global const int *src;
	int scale;
	global int *dst;
	global int *counter;
} job_t;

kernel void jobs(global const job_t *job, global const int *which)
{
	const int i = get_global_id(0);
	global const job_t *j = &job[which[i] & 1];
	j->dst[i] = j->src[i] * j->scale;
	atomic_add(j->counter, i + 1);
}

/* Two levels of indirection: a table of tables. */
kernel void ptr_chain(global int *global *global *ppp, global const int *sel, global int *out)
{
	const int i = get_global_id(0);
	const int s = sel[i];
	out[i] = ppp[s & 1][(s >> 1) & 1][i];
}

/* A private array of global pointers indexed at run time. */
kernel void ptr_private(global int *a, global int *b, global int *c, global const int *sel, global int *out)
{
	const int i = get_global_id(0);
	global int *p[3] = {a, b, c};
	volatile int k = sel[i] % 3; /* keeps the array in private memory */
	out[i] = p[k][i] * 10 + k;
}

/* Pointers stored to memory: each work item writes the address of its own
 * element (and a null pointer) into a table the host reads. */
kernel void ptr_store(global int *global *tab, global int *a)
{
	const int i = get_global_id(0);
	tab[2 * i] = a + i;
	tab[2 * i + 1] = 0;
}

/* A linked list built by the host, walked by each work item for sel[i] steps. */
typedef struct node {
	global struct node *next;
	int value;
} node_t;

kernel void ptr_list(global node_t *global *heads, global const int *steps, global int *out)
{
	const int i = get_global_id(0);
	global node_t *n = heads[i & 3];
	int sum = 0;
	for (int s = 0; s < steps[i]; s++) {
		sum += n->value;
		n = n->next;
	}
	out[i] = sum;
}

/* A struct holding pointers passed through a private variable and stored whole. */
kernel void ptr_struct_copy(global const job_t *in, global job_t *out, global int *other)
{
	const int i = get_global_id(0);
	job_t j = in[i];
	j.dst = other + i;
	out[i] = j;
	*j.dst = j.scale;
}

/* Negative offsets from a loaded pointer, and loaded pointers as integers. */
kernel void ptr_negative(global int *global *tab, global const int *sel, global int *out, global ulong *addr)
{
	const int i = get_global_id(0);
	global int *p = tab[sel[i] & 3] + 100;
	out[i] = p[-(i & 63)];
	addr[i] = (ulong)tab[sel[i] & 3];
}

/* A struct passed by value (OpenCL C allows no pointers in it): its bytes
 * are in the argument area, the kernel reads and changes its copy. */
typedef struct params {
	int scale;
	short bias;
	char shift;
	long big;
} params_t;

kernel void byval(params_t p, global const int *src, global int *out, global long *out64)
{
	const int i = get_global_id(0);
	if (i & 1)
		p.scale = -p.scale;
	out[i] = ((src[i] * p.scale) >> p.shift) + p.bias;
	out64[i] = p.big + i;
}

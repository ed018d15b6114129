// Black-Scholes European option prices, as in the classic GPU samples: call and
// put from the spot price s, strike x and time to expiry t, with the riskless
// rate r and volatility v, and the cumulative normal distribution by the
// Abramowitz-Stegun polynomial.  tests/e2e/test_spirv_corpus.c computes the
// same formulas in double precision.
#pragma OPENCL FP_CONTRACT OFF

static float cnd(float d)
{
	const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
		    a5 = 1.330274429f;
	const float rsqrt2pi = 0.39894228040143267794f;
	float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
	float c = rsqrt2pi * exp(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
	return d > 0.0f ? 1.0f - c : c;
}

__kernel void black_scholes(__global const float *s, __global const float *x, __global const float *t,
			    __global float *call, __global float *put, float r, float v, uint n)
{
	size_t i = get_global_id(0);
	if (i >= n)
		return;
	float sqrt_t = sqrt(t[i]);
	float d1 = (log(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
	float d2 = d1 - v * sqrt_t;
	float cnd1 = cnd(d1), cnd2 = cnd(d2);
	float disc = x[i] * exp(-r * t[i]);
	call[i] = s[i] * cnd1 - disc * cnd2;
	put[i] = disc * (1.0f - cnd2) - s[i] * (1.0f - cnd1);
}

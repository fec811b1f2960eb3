// Vector kernels of the fast CPU backend: exp with a sum, and max. Compiled
// for AVX2/FMA and AVX-512 beside a baseline, chosen at load time.
#include <stdint.h>
#include <string.h>
#include "kernels.h"

#define CLONES __attribute__((target_clones("avx512f", "arch=haswell", "default")))

// fexp is e^x for x <= 0 within 2 ulp: x = n·ln2 + r, |r| <= ln2/2, e^r by
// a degree-6 polynomial, 2^n put into the exponent bits.
static inline float fexp(float x) {
	if (x < -87.0f) x = -87.0f;
	float t = x * 1.44269504088896341f;
	float n = (t + 12582912.0f) - 12582912.0f;
	float r = x - n * 0.693145751953125f;
	r = r - n * 1.428606765330187e-06f;
	float p = 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	int32_t bits = ((int32_t)n + 127) << 23;
	float scale;
	memcpy(&scale, &bits, sizeof scale);
	return p * scale;
}

CLONES float mass_exp_shift(float *x, int n, float shift) {
	float acc[16] = {0};
	int i = 0;
	for (; i + 16 <= n; i += 16) {
		for (int j = 0; j < 16; j++) {
			float e = fexp(x[i + j] - shift);
			x[i + j] = e;
			acc[j] += e;
		}
	}
	float s = 0;
	for (; i < n; i++) {
		float e = fexp(x[i] - shift);
		x[i] = e;
		s += e;
	}
	for (int j = 0; j < 16; j++) s += acc[j];
	return s;
}

CLONES float mass_max(const float *x, int n) {
	float m[16];
	int i = 0;
	for (int j = 0; j < 16; j++) m[j] = -3.0e38f;
	for (; i + 16 <= n; i += 16)
		for (int j = 0; j < 16; j++) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
	float r = -3.0e38f;
	for (; i < n; i++) r = x[i] > r ? x[i] : r;
	for (int j = 0; j < 16; j++) r = m[j] > r ? m[j] : r;
	return r;
}

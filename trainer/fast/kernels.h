#ifndef MASS_FAST_KERNELS_H
#define MASS_FAST_KERNELS_H
float mass_exp_shift(float *x, int n, float shift);
float mass_max(const float *x, int n);
#endif

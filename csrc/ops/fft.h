/* fft.h: FFTs on CUDA through cuFFT with one LRU plan cache per device
 * (fft.c); the argument sugar and the CPU path (NumPy) are in
 * pycuda_sem/fft.py. */
#ifndef PCS_FFT_H
#define PCS_FFT_H

#include "tensor/tensor.h"

/* _fft_cuda, _fft_roll and the plan cache controls. */
int pcs_fft_init(PyObject *module);

#endif

"""A first call of each of torch's MKL vector-maths functions, on one thread, when attnlib is imported.

On x86 CPUs, torch hands the exp, log, sqrt, sin, cos, tanh … of a contiguous float tensor to Intel MKL's vector
maths library (VML), in chunks of 2,048 elements spread over its threads. MKL chooses the code it runs for each
function at that function's first call. When the first call comes from several threads at once (a lesson's first
softmax of more than 2,048 scores on a machine with two cores or more), one thread can run a low-accuracy version
for its whole chunk, once: ``exp`` then errs by up to about 1.5e-4 of its value instead of about 1e-7, and a
softmax written out (steps.softmax) no longer matches ``torch.softmax`` to 1e-6. Measured here on torch 2.13
(two threads, a (2, 4, 300, 300) ``exp`` after a matrix product): 13 processes of 30 got the low-accuracy chunk,
none of 30 after a first call on one thread (pytorch/pytorch issue 188792). This module makes that first call.
"""

from __future__ import annotations

import torch

# the unary functions torch computes with MKL's VML (aten/src/ATen/cpu/vml.h, IMPLEMENT_VML_MKL)
VML_FUNCTIONS = "abs acos asin atan cos erf erfc exp expm1 log log10 log1p log2 sin sqrt tan tanh trunc".split()


def settle_vml() -> None:
    """Call each VML function once on a tensor too small to be split between threads (fewer than 2,048
    elements), in float32 and float64, so that MKL has chosen its code before any call shares it out."""
    for dtype in (torch.float32, torch.float64):
        x = torch.linspace(0.1, 0.9, 16, dtype=dtype)
        for name in VML_FUNCTIONS:
            getattr(torch, name)(x)

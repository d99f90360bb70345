// serialize.h: saving and loading tensors, modules and whole training runs, one file per
// format: safetensors.h (named tensors; modules by name), checkpoint.h (a training run),
// npy.h (one tensor, NumPy's format), and bytes.h (the atomic writes they share).
#pragma once

#include "nn/bytes.h"
#include "nn/checkpoint.h"
#include "nn/npy.h"
#include "nn/safetensors.h"

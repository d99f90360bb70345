// all.h: the autograd floor (and the tensor floor under it) in one include.
#pragma once

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/graph_export.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/all.h"

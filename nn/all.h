// all.h: the nn floor (and the floors under it) in one include.
#pragma once

#include "autograd/all.h"
#include "nn/activation.h"
#include "nn/container.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/rms_norm.h"
#include "nn/serialize.h"
#include "nn/utf8.h"

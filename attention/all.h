// all.h: the attention floor (and every floor under it) in one include.
#pragma once

#include "attention/causal_attention.h"
#include "attention/core.h"
#include "attention/cross_attention.h"
#include "attention/differential_attention.h"
#include "attention/gpt.h"
#include "attention/head.h"
#include "attention/kv_cache.h"
#include "attention/latent_attention.h"
#include "attention/linear_attention.h"
#include "attention/multi_head_attention.h"
#include "attention/positions.h"
#include "attention/self_attention.h"
#include "attention/seq2seq.h"
#include "attention/text_data.h"
#include "nn/all.h"

// graph_export.h: a tensor's history as indented text or as Graphviz DOT.
//
//   std::cout << graph_text(loss);
//   SumBackward0 ()
//     MulBackward0 (2, 3)
//       leaf (2, 3) requires_grad
//       leaf (2, 3) requires_grad
//
// graph_dot(loss) writes a `digraph` that `dot -Tsvg` draws (Graphviz is not needed to make
// the text). A Node reached twice (a tensor used twice) is drawn once; the text marks the
// second visit "(shown above)".
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace qkv {

std::string graph_text(const Tensor& t);
std::string graph_dot(const Tensor& t);

}  // namespace qkv

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
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace qkv {

// Leaves are labelled "leaf (shape)", or by their name when `names` gives one, as micrograd's
// picture labels a and b: graph_text(loss, {{a, "a"}, {b, "b"}}) prints "a () requires_grad".
using LeafNames = std::vector<std::pair<Tensor, std::string>>;
std::string graph_text(const Tensor& t, const LeafNames& names = {});
std::string graph_dot(const Tensor& t, const LeafNames& names = {});

}  // namespace qkv

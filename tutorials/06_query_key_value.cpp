// Lesson 06: queries, keys and values: three projections of every token.
//
// What you will learn:
//   - W_query, W_key, W_value are trainable matrices (Parameters) that turn a token's embedding
//     into a query ("what am I looking for?"), a key ("what do I offer?") and a value ("what
//     do I pass on?");
//   - a token's query, key and value are one vector-matrix product each;
//   - all six keys (or values) at once are one matrix product: embedded_sentence @ W_key;
//   - d_out_v may differ from d_out_kq: queries and keys must match each other (they are
//     compared by a dot product), values only decide the width of the output.
// What comes before: lesson 04 (the sentence and its 6 x 3 embedding).
// Run it: ./build/release/tutorials/06_query_key_value
//         [--seed 123] [--d_out_kq 2] [--d_out_v 4]   (other values: an experiment)
#include <iostream>

#include "nn/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;

int main(int argc, char** argv) {
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4;
  lesson::Flags flags(
      "06_query_key_value",
      "W_query, W_key, W_value: the second word's query, key and value, then all of them.");
  lesson::article_flags(flags, &seed, &d_out_kq, &d_out_v);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && d_out_kq == 2 && d_out_v == 4;
    const Tensor embedded_sentence = lesson::embedded_sentence();  // lesson 04, (6, 3)

    lesson::banner("1. Three weight matrices, drawn in order");
    // >>> torch.manual_seed(123)
    // >>> d = embedded_sentence.shape[1]            # 3
    // >>> d_q, d_k, d_v = 2, 2, 4
    // >>> W_query = torch.nn.Parameter(torch.rand(d, d_q))
    // >>> W_key   = torch.nn.Parameter(torch.rand(d, d_k))
    // >>> W_value = torch.nn.Parameter(torch.rand(d, d_v))
    manual_seed(static_cast<uint64_t>(seed));
    const int64_t d = embedded_sentence.size(1), d_q = d_out_kq, d_k = d_out_kq, d_v = d_out_v;
    const Tensor W_query = nn::Parameter(rand({d, d_q}));  // New: trainable, requires grad
    const Tensor W_key = nn::Parameter(rand({d, d_k}));
    const Tensor W_value = nn::Parameter(rand({d, d_v}));
    lesson::show("W_query", W_query);
    lesson::show("W_key", W_key);
    lesson::show("W_value", W_value);
    std::cout << "Uniform numbers in [0, 1), drawn in the order W_query, W_key, W_value: drawn\n"
                 "in another order, the matrices get other numbers.\n";
    lesson::expect_prints(
        W_query, "tensor([[0.2961, 0.5166],\n        [0.2517, 0.6886],\n        [0.0740, 0.8665]])",
        "W_query is what the article's code draws: PyTorch's torch.rand after manual_seed(123)");
    lesson::expect_prints(W_value,
                          "tensor([[0.0756, 0.1966, 0.3164, 0.4017],\n"
                          "        [0.1186, 0.8274, 0.3821, 0.6605],\n"
                          "        [0.8536, 0.5932, 0.6367, 0.9826]])",
                          "W_value is what PyTorch draws next (after W_key)");

    lesson::banner("2. The second word's query, key and value");
    // >>> x_2 = embedded_sentence[1]                # "is"
    // >>> query_2 = x_2 @ W_query; key_2 = x_2 @ W_key; value_2 = x_2 @ W_value
    const Tensor x_2 = select(embedded_sentence, 0, 1);
    const Tensor query_2 = matmul(x_2, W_query);  // (3,) @ (3, 2) -> (2,)
    const Tensor key_2 = matmul(x_2, W_key);      // (2,)
    const Tensor value_2 = matmul(x_2, W_value);  // (4,)
    lesson::show("query_2", query_2);
    lesson::show("key_2", key_2);
    lesson::show("value_2", value_2);
    std::cout << "grad_fn=<SqueezeBackward3> is PyTorch 1.13's name for the last step of a vector\n"
                 "@ matrix product, and qkv's. Notebook 004, run with a later PyTorch, prints\n"
                 "SqueezeBackward4 for the same step: the name moved, the digits did not.\n"
                 "(The article prints only the shapes of query_2, key_2 and value_2. The\n"
                 "notebook's x_2 is embeded_sentence[2], the third word, so its q_2 is another\n"
                 "vector; this lesson's query_2 is row 1 of its embeded_sentence @ w_q.)\n";
    lesson::expect_prints(query_2, "tensor([0.5667, 1.8269])", "query_2 = [0.5667, 1.8269]");
    lesson::expect_prints(key_2, "tensor([0.5295, 1.7355])", "key_2 = [0.5295, 1.7355]");
    lesson::expect_prints(value_2, "tensor([0.6612, 1.8972, 1.0963, 1.8106])",
                          "value_2 = [0.6612, 1.8972, 1.0963, 1.8106]");

    lesson::banner("3. All keys and values at once");
    // >>> keys = embedded_sentence @ W_key           # (6, 2)
    // >>> values = embedded_sentence @ W_value       # (6, 4)
    const Tensor keys = matmul(embedded_sentence, W_key);      // New: one product, six rows
    const Tensor values = matmul(embedded_sentence, W_value);  // (6, 4)
    std::cout << "keys.shape: " << shape_str(keys.shape())
              << "\nvalues.shape: " << shape_str(values.shape()) << "\n";
    lesson::show("keys", keys);
    lesson::show("values", values);
    std::cout << "Row 1 of keys is key_2 and row 1 of values is value_2: a matrix product is\n"
                 "just the vector products of every row, done together.\n";
    lesson::expect_prints(keys,
                          "tensor([[-0.0823, -0.3031],\n"
                          "        [ 0.5295,  1.7355],\n"
                          "        [-0.2991, -0.7295],\n"
                          "        [ 0.1420,  0.2291],\n"
                          "        [ 0.1920,  0.6467],\n"
                          "        [-0.4788, -0.5835]])",
                          "keys match notebook 004's printout (the article prints keys.shape)");
    lesson::expect_prints(values,
                          "tensor([[-0.2546, -0.2608, -0.1544, -0.2801],\n"
                          "        [ 0.6612,  1.8972,  1.0963,  1.8106],\n"
                          "        [-0.8598, -0.6161, -0.5940, -0.9455],\n"
                          "        [ 0.5932,  0.0981,  0.2741,  0.4151],\n"
                          "        [ 0.5605,  0.5645,  0.3676,  0.6429],\n"
                          "        [-1.2107, -0.4929, -1.0081, -1.4031]])",
                          "values match notebook 004's printout");
    lesson::expect(lesson::digits(select(keys, 0, 1)) == lesson::digits(key_2), "keys[1] is key_2");
    return lesson::finish();
  });
}

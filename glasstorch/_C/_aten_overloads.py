"""The overload names of the aten operators glasstorch implements, as torch 2.13 lists them
(``torch.ops.aten.<name>.overloads()``), one operator per line: its name, then its overloads
(an indented line continues the one above).

``torch.ops.aten.add.Tensor`` resolves through this table to glasstorch's ``add``: every overload
of an operator calls glasstorch's one definition of it, which takes all of torch's argument
forms. Regenerate it from torch's schema registry when glasstorch gains aten operators.
"""

OVERLOADS = """\
_nnz default
abs default out
abs_ default
absolute default out
absolute_ default
acos default out int float complex Scalar
acos_ default
acosh default out int float complex Scalar
acosh_ default
adaptive_avg_pool1d default out
adaptive_avg_pool2d default out
adaptive_avg_pool3d default out
adaptive_max_pool1d default
adaptive_max_pool2d default out
adaptive_max_pool3d default out
add Tensor Scalar out Scalar_out t str int complex float int_complex complex_int float_complex
    complex_float int_float float_int default
add_ Tensor Scalar t
addbmm default out
addbmm_ default
addcdiv default out
addcdiv_ default
addcmul default out
addcmul_ default
addmm default out dtype_out dtype
addmm_ default
addmv default out
addmv_ default
addr default out
addr_ default
adjoint default
affine_grid_generator default out
all default dim dims out dims_out all_out int float bool
allclose default
alpha_dropout default
alpha_dropout_ default
amax default out
amin default out
aminmax default out
angle default out int float complex Scalar
any default dim dims out dims_out all_out str int float bool
arange default start start_step start_out out
arccos default out
arccos_ default
arccosh default out
arccosh_ default
arcsin default out
arcsin_ default
arcsinh default out
arcsinh_ default
arctan default out
arctan2 default out
arctan2_ default
arctan_ default
arctanh default out
arctanh_ default
argmax default out
argmin default out
argsort default stable stable_out
argwhere default
as_strided default
as_strided_ default
as_tensor bool float int complex default list
asin default out int float complex Scalar
asin_ default
asinh default out int float complex Scalar
asinh_ default
atan default out int float complex Scalar
atan2 default out int float int_float float_int Scalar_Scalar
atan2_ default
atan_ default
atanh default out int float complex Scalar
atanh_ default
atleast_1d default Sequence
atleast_2d default Sequence
atleast_3d default Sequence
avg_pool1d default out
avg_pool2d default out
avg_pool3d default out
baddbmm default out dtype_out dtype
baddbmm_ default
batch_norm default
bernoulli default out p Tensor Tensor_out float_out
bernoulli_ Tensor float
bilinear default
binary_cross_entropy default out
binary_cross_entropy_with_logits default out
bincount default out
bitwise_and Tensor Scalar Scalar_Tensor Tensor_out Scalar_out Scalar_Tensor_out
bitwise_and_ Tensor Scalar
bitwise_left_shift Tensor Tensor_Scalar Scalar_Tensor Tensor_out Tensor_Scalar_out
    Scalar_Tensor_out
bitwise_left_shift_ Tensor_Scalar Tensor
bitwise_not default out
bitwise_not_ default
bitwise_or Tensor Scalar Scalar_Tensor Tensor_out Scalar_out Scalar_Tensor_out
bitwise_or_ Tensor Scalar
bitwise_right_shift Tensor Tensor_Scalar Scalar_Tensor Tensor_out Tensor_Scalar_out
    Scalar_Tensor_out
bitwise_right_shift_ Tensor_Scalar Tensor
bitwise_xor Tensor Scalar Scalar_Tensor Tensor_out Scalar_out Scalar_Tensor_out
bitwise_xor_ Tensor Scalar
block_diag default out
bmm default out dtype_out dtype
broadcast_shapes default
broadcast_tensors default
broadcast_to default
bucketize Tensor Scalar Tensor_out Scalar_out
cartesian_prod default
cat default out
cauchy_ default
cdist default
ceil default out int float Scalar
ceil_ default
celu default out
celu_ default
chain_matmul default out
channel_shuffle default out
cholesky default out
chunk default
clamp default Tensor out Tensor_out
clamp_ default Tensor
clamp_max default Tensor out Tensor_out
clamp_max_ default Tensor
clamp_min default Tensor out Tensor_out
clamp_min_ default Tensor
clip default Tensor out Tensor_out
clip_ default Tensor
clone default out
coalesce default
col_indices default
column_stack default out
combinations default
concat default out
concatenate default out
conj default
conj_physical default out
conj_physical_ default
constant_pad_nd default out
contiguous default
conv1d default padding
conv2d default padding
conv3d default padding
conv_tbc default out
conv_transpose1d default
conv_transpose2d input
conv_transpose3d input
convolution default out
copy_ default Tensor int float
copysign Tensor Scalar out Scalar_out int float int_float float_int default
copysign_ Tensor Scalar
corrcoef default
cos default out int float complex Scalar
cos_ default
cosh default out int float complex Scalar
cosh_ default
cosine_embedding_loss default
cosine_similarity default
count_nonzero default dim_IntList dim_IntList_out out
cov default
cross default out
crow_indices default
ctc_loss IntList Tensor
cummax default out
cummin default out
cumprod default out
cumprod_ default
cumsum default out
cumsum_ default
deg2rad default out
deg2rad_ default
dense_dim default
det default
diag default out
diag_embed default out
diagflat default
diagonal default
diff default out
dist default out
div Tensor Scalar Tensor_mode Scalar_mode out out_mode Scalar_out Scalar_mode_out int complex
    float default
div_ Tensor Tensor_mode Scalar Scalar_mode
divide Tensor Scalar Tensor_mode Scalar_mode out out_mode
divide_ Tensor Tensor_mode Scalar_mode Scalar
dot default out
dropout default
dropout_ default
dsplit int array
dstack default out
einsum default sublist
elu default out
elu_ default
embedding default out
embedding_bag default padding_idx
embedding_renorm_ default
empty memory_format out
empty_like default out
empty_strided default out
eq Tensor Scalar Scalar_out Tensor_out int_list device bool enum int complex float int_float
    float_int float_complex complex_float default str float_list Tensor_list bool_list str_list
eq_ Scalar Tensor
equal default
erf default out int float Scalar
erf_ default
erfc default out int float Scalar
erfc_ default
erfinv default out
erfinv_ default
exp default out int float complex Scalar
exp2 default out
exp2_ default
exp_ default
expand default
expand_as default
expm1 default out int float Scalar
expm1_ default
exponential_ default
eye default m out m_out
feature_alpha_dropout default
feature_alpha_dropout_ default
feature_dropout default
feature_dropout_ default
fill_ Scalar Tensor
fix default out
fix_ default
flatten using_ints
flip default out
fliplr default
flipud default
float_power Tensor_Tensor Tensor_Scalar Scalar Tensor_Tensor_out Scalar_out Tensor_Scalar_out
float_power_ Tensor Scalar
floor default out int float Scalar
floor_ default
floor_divide default Scalar out Scalar_out
floor_divide_ Tensor Scalar
fmax default out
fmin default out
fmod Tensor Scalar Tensor_out Scalar_out int float int_float float_int default
fmod_ Tensor Scalar
frac default out
frac_ default
frexp Tensor Tensor_out default
full default out
full_like default out
gather default out
ge Tensor Scalar Scalar_out Tensor_out int float int_float float_int default str
ge_ Scalar Tensor
gelu default out
geometric_ default
ger default out
glu default out
greater Tensor Scalar Scalar_out Tensor_out
greater_ Scalar Tensor
greater_equal Tensor Scalar Scalar_out Tensor_out
greater_equal_ Scalar Tensor
grid_sampler default
group_norm default
gru input data
gru_cell default
gt Tensor Scalar Scalar_out Tensor_out int float int_float float_int default str
gt_ Scalar Tensor
hardshrink default out
hardsigmoid default out
hardswish default out
hardtanh default out
hardtanh_ default
heaviside default out
heaviside_ default
hinge_embedding_loss default
histc default out
hsplit int array
hstack default out
huber_loss default out
hypot default out
hypot_ default
imag default
index_add default out
index_add_ default
index_copy default out
index_copy_ default
index_fill int_Tensor int_Scalar int_Scalar_out int_Tensor_out
index_fill_ int_Tensor int_Scalar
index_put default out hacked_twin
index_put_ default hacked_twin
index_select default out
indices default
initial_seed default
inner default out
instance_norm default
inverse default out
is_coalesced default
is_complex default
is_floating_point default
is_nonzero default
is_same_size default
isclose default
isfinite default float complex
isinf default out float complex
isnan default out float complex
isneginf default out
isposinf default out
isreal default
kl_div default
kron default out
kthvalue default values
l1_loss default
layer_norm default
ldexp Tensor out default
ldexp_ default
le Tensor Scalar Scalar_out Tensor_out int float int_float float_int default str
le_ Scalar Tensor
leaky_relu default out
leaky_relu_ default
lerp Scalar Tensor Scalar_out Tensor_out
lerp_ Scalar Tensor
less Tensor Scalar Scalar_out Tensor_out
less_ Scalar Tensor
less_equal Tensor Scalar Scalar_out Tensor_out
less_equal_ Scalar Tensor
linear default out
linspace Tensor_Tensor Tensor_Scalar Scalar_Tensor default out Tensor_Tensor_out
    Tensor_Scalar_out Scalar_Tensor_out
log default out int float complex Scalar int_int float_float complex_complex int_float
    float_int int_complex complex_int float_complex complex_float Scalar_Scalar
log10 default out int float complex Scalar
log10_ default
log1p default out int float Scalar
log1p_ default
log2 default out
log2_ default
log_ default
log_normal_ default
log_softmax int int_out
logcumsumexp default out
logdet default
logical_and default out
logical_and_ default
logical_not default out
logical_not_ default
logical_or default out
logical_or_ default
logical_xor default out
logical_xor_ default
logit default out
logit_ default
logspace Tensor_Tensor Tensor_Scalar Scalar_Tensor default out Tensor_Tensor_out
    Tensor_Scalar_out Scalar_Tensor_out
logsumexp default out
lstm input data
lstm_cell default
lt Tensor Scalar Scalar_out Tensor_out int float int_float float_int default str
lt_ Scalar Tensor
manual_seed default generator
margin_ranking_loss default
masked_fill Scalar Scalar_out Tensor Tensor_out
masked_fill_ Scalar Tensor
masked_scatter default out
masked_scatter_ default
masked_select default out
matmul default out
matrix_power default out
max other default dim dim_max unary_out out
max_pool1d default
max_pool1d_with_indices default
max_pool2d default
max_pool2d_with_indices default out
max_pool3d default
max_pool3d_with_indices default out
max_unpool2d default out
max_unpool3d default out
maximum default out
mean default dim out dtype_out
median default dim dim_values out
meshgrid default indexing
min other default dim dim_min unary_out out
minimum default out
mish default out
mm default out dtype_out dtype
mode default values
moveaxis intlist int
movedim int intlist
mse_loss default out
msort default out
mul Tensor Scalar out Scalar_out left_t right_ int complex float int_complex complex_int
    float_complex complex_float int_float float_int default
mul_ Tensor Scalar t
multi_margin_loss default out
multilabel_margin_loss default out
multinomial default out
multiply Tensor Scalar out
multiply_ Tensor Scalar
mv default out
nan_to_num default out
nan_to_num_ default
nanmean default out
nanmedian default dim dim_values out
nansum default out
narrow default Tensor
narrow_copy default out
native_batch_norm default out
native_channel_shuffle default
native_dropout default out
native_group_norm default out
native_layer_norm default out
ne Tensor Scalar Scalar_out Tensor_out int_list device bool enum int complex float int_float
    float_int float_complex complex_float default str float_list Tensor_list bool_list str_list
ne_ Scalar Tensor
neg default out int float complex Scalar
neg_ default
negative default out
negative_ default
new_empty default out
new_full default out
new_ones default out
new_zeros default out
nll_loss default out
nonzero default out
norm Scalar ScalarOpt_dim ScalarOpt_dim_dtype dtype_out out ScalarOpt_dtype ScalarOpt_dtype_out
    Scalar_out
normal Tensor_float Tensor_float_out float_Tensor_out float_Tensor Tensor_Tensor
    Tensor_Tensor_out float_float float_float_out out
normal_ default
not_equal Tensor Scalar Scalar_out Tensor_out
not_equal_ Scalar Tensor
numel default
one_hot default
ones default out
ones_like default out
outer default out
pad default
pairwise_distance default
pdist default
permute default
pinverse default
pixel_shuffle default out
pixel_unshuffle default out
poisson default out
poisson_nll_loss default
positive default
pow Tensor_Tensor Tensor_Scalar Scalar Tensor_Tensor_out Scalar_out Tensor_Scalar_out int
    complex float int_float float_int float_complex complex_float Scalar_Scalar int_to_int
pow_ Scalar Tensor
prelu default
prod default dim_int int_out out
put default out
put_ default
qr default Q
rad2deg default out
rad2deg_ default
rand default generator out generator_out
rand_like default generator out generator_out
randint default generator low low_generator out generator_out low_out low_generator_out
randint_like default Tensor low_dtype generator Tensor_generator low_generator_dtype out
    generator_out Tensor_out Tensor_generator_out low_dtype_out low_generator_dtype_out
randn default generator out generator_out
randn_like default generator out generator_out
random_ from to default
randperm default generator out generator_out
range step default out out_
real default
reciprocal default out
reciprocal_ default
relu default out
relu6 default
relu_ default
remainder Tensor Scalar Scalar_Tensor Tensor_out Scalar_out Scalar_Tensor_out int float
    int_float float_int default
remainder_ Tensor Scalar
repeat default out
repeat_interleave Tensor self_Tensor self_int Tensor_out
reshape default
reshape_as default
resize_ default
resolve_conj default
resolve_neg default
rms_norm default
rnn_relu input data
rnn_relu_cell default
rnn_tanh input data
rnn_tanh_cell default
roll default out
rot90 default out
round default decimals out decimals_out int float Scalar
round_ default decimals
row_stack default out
rrelu default
rrelu_ default
rsqrt default out
rsqrt_ default
scalar_tensor default out
scaled_dot_product_attention default
scatter value src reduce value_reduce src_out value_out reduce_out value_reduce_out
scatter_ src value reduce value_reduce
scatter_add default out
scatter_add_ default
scatter_reduce two two_out
scatter_reduce_ two
searchsorted Tensor Tensor_out Scalar Scalar_out
seed default
select int t
selu default
selu_ default
sgn default out
sgn_ default
sigmoid default out
sigmoid_ default
sign default out
sign_ default
signbit default out
silu default out
sin default out int float complex Scalar
sin_ default
sinh default out int float complex Scalar
sinh_ default
slogdet default out
smooth_l1_loss default out
soft_margin_loss default out
softmax int int_out
softplus default out
softshrink default out
sort default stable values_stable values int float Tensor bool str any
sparse_coo_tensor size indices indices_size size_out
sparse_csr_tensor crow_col_value_size crow_col_value
sparse_dim default
split Tensor sizes str default
split_with_sizes default
sqrt default out int float complex Scalar
sqrt_ default
square default out
square_ default
squeeze default dim dims
squeeze_ default dim dims
stack default out
std default dim correction correction_out out
std_mean default dim correction correction_out
sub Tensor Scalar out Scalar_out int complex float int_complex complex_int float_complex
    complex_float int_float float_int default
sub_ Tensor Scalar
subtract Tensor out Scalar
subtract_ Tensor Scalar
sum dim_IntList default IntList_out out int float complex bool
svd default U
swapaxes default
swapaxes_ default
swapdims default
swapdims_ default
t default
t_ default
take default out
take_along_dim default out
tan default out int float complex Scalar
tan_ default
tanh default out int float complex Scalar
tanh_ default
tensor bool float int complex default
tensor_split sections indices tensor_indices_or_sections
tensordot default out
threshold default out
threshold_ default
tile default
to device dtype other dtype_layout prim_Device prim_dtype prim_other
to_dense default
to_sparse sparse_dim default
to_sparse_csr default
topk default values
trace default out
transpose int
transpose_ default
tril default out
tril_ default
tril_indices default out
triplet_margin_loss default
triu default out
triu_ default
triu_indices default out
true_divide Tensor Scalar out
true_divide_ Tensor Scalar
trunc default out
trunc_ default
unbind int
unflatten int
unfold default
uniform_ default
unique_consecutive default out
unsqueeze default
unsqueeze_ default
values default str int bool float complex Tensor
var default dim correction correction_out out
var_mean default dim correction correction_out
vdot default out
view default dtype
view_as default
view_as_complex default
view_as_real default
vsplit int array
vstack default out
where self ScalarOther ScalarSelf Scalar default self_out
xlogy Tensor Scalar_Other Scalar_Self OutTensor OutScalar_Self OutScalar_Other
xlogy_ Tensor Scalar_Other
zero_ default
zeros default out
zeros_like default out
"""

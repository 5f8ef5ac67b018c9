"""Caffe's protobuf messages (the subset in ``caffe.proto``), built at import time.

Python's protobuf cannot compile ``.proto`` text (that takes ``protoc``), so the messages
are described by the table below (:data:`ENUMS`, :data:`MESSAGES`: Caffe's names, field
numbers, types and defaults) and turned into a ``FileDescriptorProto`` in a private
descriptor pool, so no generated ``_pb2`` code is shipped and another ``caffe_pb2`` in
the same process does not clash. ``caffe.proto`` next to this file is the same schema
in protobuf's own syntax; a test checks that the two agree.

Example:
    >>> net = message_class("NetParameter")()
    >>> layer = net.layer.add(name="conv1", type="Convolution")
    >>> layer.convolution_param.num_output = 8
    >>> message_class("NetParameter").FromString(net.SerializeToString()).layer[0].name
    'conv1'
"""
from __future__ import annotations

import functools

__all__ = ["ENUMS", "MESSAGES", "file_descriptor_proto", "message_class"]

#: enums, ``"Message.Enum"`` for nested ones: ``((value name, number), ...)``
ENUMS = {
    'FillerParameter.VarianceNorm': (('FAN_IN', 0), ('FAN_OUT', 1), ('AVERAGE', 2)),
    'Phase': (('TRAIN', 0), ('TEST', 1)),
    'ParamSpec.DimCheckMode': (('STRICT', 0), ('PERMISSIVE', 1)),
    'ConvolutionParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'EltwiseParameter.EltwiseOp': (('PROD', 0), ('SUM', 1), ('MAX', 2)),
    'LRNParameter.NormRegion': (('ACROSS_CHANNELS', 0), ('WITHIN_CHANNEL', 1)),
    'LRNParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'PoolingParameter.PoolMethod': (('MAX', 0), ('AVE', 1), ('STOCHASTIC', 2)),
    'PoolingParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'PoolingParameter.RoundMode': (('CEIL', 0), ('FLOOR', 1)),
    'ReLUParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'SigmoidParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'SoftmaxParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'TanHParameter.Engine': (('DEFAULT', 0), ('CAFFE', 1), ('CUDNN', 2)),
    'V1LayerParameter.LayerType': (
        ('NONE', 0), ('ABSVAL', 35), ('ACCURACY', 1), ('ARGMAX', 30), ('BNLL', 2), ('CONCAT', 3),
        ('CONTRASTIVE_LOSS', 37), ('CONVOLUTION', 4), ('DATA', 5), ('DECONVOLUTION', 39),
        ('DROPOUT', 6), ('DUMMY_DATA', 32), ('EUCLIDEAN_LOSS', 7), ('ELTWISE', 25), ('EXP', 38),
        ('FLATTEN', 8), ('HDF5_DATA', 9), ('HDF5_OUTPUT', 10), ('HINGE_LOSS', 28), ('IM2COL', 11),
        ('IMAGE_DATA', 12), ('INFOGAIN_LOSS', 13), ('INNER_PRODUCT', 14), ('LRN', 15),
        ('MEMORY_DATA', 29), ('MULTINOMIAL_LOGISTIC_LOSS', 16), ('MVN', 34), ('POOLING', 17),
        ('POWER', 26), ('RELU', 18), ('SIGMOID', 19), ('SIGMOID_CROSS_ENTROPY_LOSS', 27),
        ('SILENCE', 36), ('SOFTMAX', 20), ('SOFTMAX_LOSS', 21), ('SPLIT', 22), ('SLICE', 33),
        ('TANH', 23), ('WINDOW_DATA', 24), ('THRESHOLD', 31),
    ),
}
#: messages: ``(label ('o' optional, 'r' repeated), type, name, number[, default[,
#: 'packed']])`` per field; a type is a scalar, an enum of the message or the file, or
#: a message
MESSAGES = {
    'BlobShape': (
        ('r', 'int64', 'dim', 1, None, 'packed'),
    ),
    'BlobProto': (
        ('o', 'BlobShape', 'shape', 7),
        ('r', 'float', 'data', 5, None, 'packed'),
        ('r', 'float', 'diff', 6, None, 'packed'),
        ('r', 'double', 'double_data', 8, None, 'packed'),
        ('r', 'double', 'double_diff', 9, None, 'packed'),
        ('o', 'int32', 'num', 1, '0'),
        ('o', 'int32', 'channels', 2, '0'),
        ('o', 'int32', 'height', 3, '0'),
        ('o', 'int32', 'width', 4, '0'),
    ),
    'FillerParameter': (
        ('o', 'string', 'type', 1, 'constant'),
        ('o', 'float', 'value', 2, '0'),
        ('o', 'float', 'min', 3, '0'),
        ('o', 'float', 'max', 4, '1'),
        ('o', 'float', 'mean', 5, '0'),
        ('o', 'float', 'std', 6, '1'),
        ('o', 'int32', 'sparse', 7, '-1'),
        ('o', 'VarianceNorm', 'variance_norm', 8, 'FAN_IN'),
    ),
    'NetParameter': (
        ('o', 'string', 'name', 1),
        ('r', 'string', 'input', 3),
        ('r', 'BlobShape', 'input_shape', 8),
        ('r', 'int32', 'input_dim', 4),
        ('o', 'bool', 'force_backward', 5, 'false'),
        ('o', 'NetState', 'state', 6),
        ('o', 'bool', 'debug_info', 7, 'false'),
        ('r', 'LayerParameter', 'layer', 100),
        ('r', 'V1LayerParameter', 'layers', 2),
    ),
    'NetState': (
        ('o', 'Phase', 'phase', 1, 'TEST'),
        ('o', 'int32', 'level', 2, '0'),
        ('r', 'string', 'stage', 3),
    ),
    'NetStateRule': (
        ('o', 'Phase', 'phase', 1),
        ('o', 'int32', 'min_level', 2),
        ('o', 'int32', 'max_level', 3),
        ('r', 'string', 'stage', 4),
        ('r', 'string', 'not_stage', 5),
    ),
    'ParamSpec': (
        ('o', 'string', 'name', 1),
        ('o', 'DimCheckMode', 'share_mode', 2),
        ('o', 'float', 'lr_mult', 3, '1'),
        ('o', 'float', 'decay_mult', 4, '1'),
    ),
    'LayerParameter': (
        ('o', 'string', 'name', 1),
        ('o', 'string', 'type', 2),
        ('r', 'string', 'bottom', 3),
        ('r', 'string', 'top', 4),
        ('o', 'Phase', 'phase', 10),
        ('r', 'float', 'loss_weight', 5),
        ('r', 'ParamSpec', 'param', 6),
        ('r', 'BlobProto', 'blobs', 7),
        ('r', 'bool', 'propagate_down', 11),
        ('r', 'NetStateRule', 'include', 8),
        ('r', 'NetStateRule', 'exclude', 9),
        ('o', 'TransformationParameter', 'transform_param', 100),
        ('o', 'BatchNormParameter', 'batch_norm_param', 139),
        ('o', 'BiasParameter', 'bias_param', 141),
        ('o', 'ConcatParameter', 'concat_param', 104),
        ('o', 'ConvolutionParameter', 'convolution_param', 106),
        ('o', 'CropParameter', 'crop_param', 144),
        ('o', 'DropoutParameter', 'dropout_param', 108),
        ('o', 'EltwiseParameter', 'eltwise_param', 110),
        ('o', 'ELUParameter', 'elu_param', 140),
        ('o', 'FlattenParameter', 'flatten_param', 135),
        ('o', 'InnerProductParameter', 'inner_product_param', 117),
        ('o', 'InputParameter', 'input_param', 143),
        ('o', 'LRNParameter', 'lrn_param', 118),
        ('o', 'PoolingParameter', 'pooling_param', 121),
        ('o', 'PowerParameter', 'power_param', 122),
        ('o', 'PReLUParameter', 'prelu_param', 131),
        ('o', 'ReLUParameter', 'relu_param', 123),
        ('o', 'ReshapeParameter', 'reshape_param', 133),
        ('o', 'ScaleParameter', 'scale_param', 142),
        ('o', 'SigmoidParameter', 'sigmoid_param', 124),
        ('o', 'SliceParameter', 'slice_param', 126),
        ('o', 'SoftmaxParameter', 'softmax_param', 125),
        ('o', 'TanHParameter', 'tanh_param', 127),
    ),
    'TransformationParameter': (
        ('o', 'float', 'scale', 1, '1'),
        ('o', 'bool', 'mirror', 2, 'false'),
        ('o', 'uint32', 'crop_size', 3, '0'),
        ('o', 'string', 'mean_file', 4),
        ('r', 'float', 'mean_value', 5),
        ('o', 'bool', 'force_color', 6, 'false'),
        ('o', 'bool', 'force_gray', 7, 'false'),
    ),
    'InputParameter': (
        ('r', 'BlobShape', 'shape', 1),
    ),
    'BatchNormParameter': (
        ('o', 'bool', 'use_global_stats', 1),
        ('o', 'float', 'moving_average_fraction', 2, '0.999'),
        ('o', 'float', 'eps', 3, '1e-05'),
    ),
    'BiasParameter': (
        ('o', 'int32', 'axis', 1, '1'),
        ('o', 'int32', 'num_axes', 2, '1'),
        ('o', 'FillerParameter', 'filler', 3),
    ),
    'ConcatParameter': (
        ('o', 'int32', 'axis', 2, '1'),
        ('o', 'uint32', 'concat_dim', 1, '1'),
    ),
    'ConvolutionParameter': (
        ('o', 'uint32', 'num_output', 1),
        ('o', 'bool', 'bias_term', 2, 'true'),
        ('r', 'uint32', 'pad', 3),
        ('r', 'uint32', 'kernel_size', 4),
        ('r', 'uint32', 'stride', 6),
        ('r', 'uint32', 'dilation', 18),
        ('o', 'uint32', 'pad_h', 9, '0'),
        ('o', 'uint32', 'pad_w', 10, '0'),
        ('o', 'uint32', 'kernel_h', 11),
        ('o', 'uint32', 'kernel_w', 12),
        ('o', 'uint32', 'stride_h', 13),
        ('o', 'uint32', 'stride_w', 14),
        ('o', 'uint32', 'group', 5, '1'),
        ('o', 'FillerParameter', 'weight_filler', 7),
        ('o', 'FillerParameter', 'bias_filler', 8),
        ('o', 'Engine', 'engine', 15, 'DEFAULT'),
        ('o', 'int32', 'axis', 16, '1'),
        ('o', 'bool', 'force_nd_im2col', 17, 'false'),
    ),
    'CropParameter': (
        ('o', 'int32', 'axis', 1, '2'),
        ('r', 'uint32', 'offset', 2),
    ),
    'DropoutParameter': (
        ('o', 'float', 'dropout_ratio', 1, '0.5'),
    ),
    'EltwiseParameter': (
        ('o', 'EltwiseOp', 'operation', 1, 'SUM'),
        ('r', 'float', 'coeff', 2),
        ('o', 'bool', 'stable_prod_grad', 3, 'true'),
    ),
    'ELUParameter': (
        ('o', 'float', 'alpha', 1, '1'),
    ),
    'FlattenParameter': (
        ('o', 'int32', 'axis', 1, '1'),
        ('o', 'int32', 'end_axis', 2, '-1'),
    ),
    'InnerProductParameter': (
        ('o', 'uint32', 'num_output', 1),
        ('o', 'bool', 'bias_term', 2, 'true'),
        ('o', 'FillerParameter', 'weight_filler', 3),
        ('o', 'FillerParameter', 'bias_filler', 4),
        ('o', 'int32', 'axis', 5, '1'),
        ('o', 'bool', 'transpose', 6, 'false'),
    ),
    'LRNParameter': (
        ('o', 'uint32', 'local_size', 1, '5'),
        ('o', 'float', 'alpha', 2, '1'),
        ('o', 'float', 'beta', 3, '0.75'),
        ('o', 'NormRegion', 'norm_region', 4, 'ACROSS_CHANNELS'),
        ('o', 'float', 'k', 5, '1'),
        ('o', 'Engine', 'engine', 6, 'DEFAULT'),
    ),
    'PoolingParameter': (
        ('o', 'PoolMethod', 'pool', 1, 'MAX'),
        ('o', 'uint32', 'pad', 4, '0'),
        ('o', 'uint32', 'pad_h', 9, '0'),
        ('o', 'uint32', 'pad_w', 10, '0'),
        ('o', 'uint32', 'kernel_size', 2),
        ('o', 'uint32', 'kernel_h', 5),
        ('o', 'uint32', 'kernel_w', 6),
        ('o', 'uint32', 'stride', 3, '1'),
        ('o', 'uint32', 'stride_h', 7),
        ('o', 'uint32', 'stride_w', 8),
        ('o', 'Engine', 'engine', 11, 'DEFAULT'),
        ('o', 'bool', 'global_pooling', 12, 'false'),
        ('o', 'RoundMode', 'round_mode', 13, 'CEIL'),
    ),
    'PowerParameter': (
        ('o', 'float', 'power', 1, '1'),
        ('o', 'float', 'scale', 2, '1'),
        ('o', 'float', 'shift', 3, '0'),
    ),
    'PReLUParameter': (
        ('o', 'FillerParameter', 'filler', 1),
        ('o', 'bool', 'channel_shared', 2, 'false'),
    ),
    'ReLUParameter': (
        ('o', 'float', 'negative_slope', 1, '0'),
        ('o', 'Engine', 'engine', 2, 'DEFAULT'),
    ),
    'ReshapeParameter': (
        ('o', 'BlobShape', 'shape', 1),
        ('o', 'int32', 'axis', 2, '0'),
        ('o', 'int32', 'num_axes', 3, '-1'),
    ),
    'ScaleParameter': (
        ('o', 'int32', 'axis', 1, '1'),
        ('o', 'int32', 'num_axes', 2, '1'),
        ('o', 'FillerParameter', 'filler', 3),
        ('o', 'bool', 'bias_term', 4, 'false'),
        ('o', 'FillerParameter', 'bias_filler', 5),
    ),
    'SigmoidParameter': (
        ('o', 'Engine', 'engine', 1, 'DEFAULT'),
    ),
    'SliceParameter': (
        ('o', 'int32', 'axis', 3, '1'),
        ('r', 'uint32', 'slice_point', 2),
        ('o', 'uint32', 'slice_dim', 1, '1'),
    ),
    'SoftmaxParameter': (
        ('o', 'Engine', 'engine', 1, 'DEFAULT'),
        ('o', 'int32', 'axis', 2, '1'),
    ),
    'TanHParameter': (
        ('o', 'Engine', 'engine', 1, 'DEFAULT'),
    ),
    'V1LayerParameter': (
        ('r', 'string', 'bottom', 2),
        ('r', 'string', 'top', 3),
        ('o', 'string', 'name', 4),
        ('r', 'NetStateRule', 'include', 32),
        ('r', 'NetStateRule', 'exclude', 33),
        ('o', 'LayerType', 'type', 5),
        ('r', 'BlobProto', 'blobs', 6),
        ('r', 'float', 'blobs_lr', 7),
        ('r', 'float', 'weight_decay', 8),
        ('r', 'float', 'loss_weight', 35),
        ('o', 'ConcatParameter', 'concat_param', 9),
        ('o', 'ConvolutionParameter', 'convolution_param', 10),
        ('o', 'DropoutParameter', 'dropout_param', 12),
        ('o', 'EltwiseParameter', 'eltwise_param', 24),
        ('o', 'InnerProductParameter', 'inner_product_param', 17),
        ('o', 'LRNParameter', 'lrn_param', 18),
        ('o', 'PoolingParameter', 'pooling_param', 19),
        ('o', 'PowerParameter', 'power_param', 21),
        ('o', 'ReLUParameter', 'relu_param', 30),
        ('o', 'SigmoidParameter', 'sigmoid_param', 38),
        ('o', 'SoftmaxParameter', 'softmax_param', 39),
        ('o', 'SliceParameter', 'slice_param', 31),
        ('o', 'TanHParameter', 'tanh_param', 37),
        ('o', 'TransformationParameter', 'transform_param', 36),
    ),
}

_SCALARS = {"double": 1, "float": 2, "int64": 3, "uint64": 4, "int32": 5, "bool": 8,
            "string": 9, "bytes": 12, "uint32": 13}
_TYPE_MESSAGE, _TYPE_ENUM = 11, 14
_LABELS = {"o": 1, "r": 3}
PACKAGE = "caffe"


def _field(message: str, spec: tuple):
    from google.protobuf import descriptor_pb2

    label, typ, name, number = spec[:4]
    default = spec[4] if len(spec) > 4 else None
    f = descriptor_pb2.FieldDescriptorProto(name=name, number=number, label=_LABELS[label])
    if typ in _SCALARS:
        f.type = _SCALARS[typ]
    elif f"{message}.{typ}" in ENUMS:
        f.type, f.type_name = _TYPE_ENUM, f".{PACKAGE}.{message}.{typ}"
    elif typ in ENUMS:
        f.type, f.type_name = _TYPE_ENUM, f".{PACKAGE}.{typ}"
    elif typ in MESSAGES:
        f.type, f.type_name = _TYPE_MESSAGE, f".{PACKAGE}.{typ}"
    else:
        raise ValueError(f"caffe schema: field {message}.{name} has an unknown type {typ!r}")
    if default is not None:
        f.default_value = default
    if "packed" in spec[5:]:
        f.options.packed = True
    return f


def file_descriptor_proto():
    """The table as a ``google.protobuf.descriptor_pb2.FileDescriptorProto``.

    Returns:
        A proto2 file descriptor of package ``caffe`` holding :data:`MESSAGES` and
        :data:`ENUMS`.

    Example:
        >>> fd = file_descriptor_proto()
        >>> fd.package, [f.number for f in fd.message_type[0].field]
        ('caffe', [1])
    """
    from google.protobuf import descriptor_pb2

    fd = descriptor_pb2.FileDescriptorProto(name="kbackend/caffe.proto", package=PACKAGE,
                                            syntax="proto2")
    for enum_name, values in ENUMS.items():
        owner, _, short = enum_name.rpartition(".")
        if not owner:
            fd.enum_type.add(name=short).value.extend(
                descriptor_pb2.EnumValueDescriptorProto(name=n, number=v) for n, v in values)
    for message, fields in MESSAGES.items():
        m = fd.message_type.add(name=message)
        for enum_name, values in ENUMS.items():
            owner, _, short = enum_name.rpartition(".")
            if owner == message:
                m.enum_type.add(name=short).value.extend(
                    descriptor_pb2.EnumValueDescriptorProto(name=n, number=v)
                    for n, v in values)
        m.field.extend(_field(message, spec) for spec in fields)
    return fd


@functools.lru_cache(maxsize=1)
def _pool():
    from google.protobuf import descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor_proto())
    return pool


@functools.cache
def message_class(name: str):
    """The message class ``caffe.<name>`` (``NetParameter``, ``BlobProto``, ...).

    Args:
        name: a message of :data:`MESSAGES`.

    Returns:
        A protobuf message class (``FromString``, ``SerializeToString``, fields as
        attributes).

    Raises:
        ImportError: protobuf is not installed (``pip install kbackend[caffe]``).
        KeyError: ``name`` is not in the schema.

    Example:
        >>> message_class("BlobShape")(dim=[2, 3]).dim[:]
        [2, 3]
    """
    if name not in MESSAGES:
        raise KeyError(f"caffe schema: no message {name!r}; the schema has "
                       f"{', '.join(sorted(MESSAGES))}")
    try:
        from google.protobuf import message_factory
    except ImportError as e:  # pragma: no cover - protobuf is in the [caffe] extra
        raise ImportError("gluon.compat.caffe needs protobuf: pip install "
                          "'kbackend[caffe]' (or pip install protobuf)") from e
    return message_factory.GetMessageClass(_pool().FindMessageTypeByName(f"{PACKAGE}.{name}"))

/**
 * The part of ONNX's protobuf schema (onnx.proto, field numbers as published) needed to write a
 * model, as a protobufjs root.
 */
import protobuf from "protobufjs";

export const DataType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9 } as const;
export const AttributeType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 } as const;

const root = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        AttributeProto: {
          fields: {
            name: { type: "string", id: 1 },
            f: { type: "float", id: 2 },
            i: { type: "int64", id: 3 },
            s: { type: "bytes", id: 4 },
            t: { type: "TensorProto", id: 5 },
            floats: { rule: "repeated", type: "float", id: 7 },
            ints: { rule: "repeated", type: "int64", id: 8 },
            type: { type: "int32", id: 20 },
          },
        },
        ValueInfoProto: { fields: { name: { type: "string", id: 1 }, type: { type: "TypeProto", id: 2 }, doc_string: { type: "string", id: 3 } } },
        NodeProto: {
          fields: {
            input: { rule: "repeated", type: "string", id: 1 },
            output: { rule: "repeated", type: "string", id: 2 },
            name: { type: "string", id: 3 },
            op_type: { type: "string", id: 4 },
            attribute: { rule: "repeated", type: "AttributeProto", id: 5 },
            domain: { type: "string", id: 7 },
          },
        },
        StringStringEntryProto: { fields: { key: { type: "string", id: 1 }, value: { type: "string", id: 2 } } },
        OperatorSetIdProto: { fields: { domain: { type: "string", id: 1 }, version: { type: "int64", id: 2 } } },
        ModelProto: {
          fields: {
            ir_version: { type: "int64", id: 1 },
            producer_name: { type: "string", id: 2 },
            producer_version: { type: "string", id: 3 },
            doc_string: { type: "string", id: 6 },
            graph: { type: "GraphProto", id: 7 },
            opset_import: { rule: "repeated", type: "OperatorSetIdProto", id: 8 },
            metadata_props: { rule: "repeated", type: "StringStringEntryProto", id: 14 },
          },
        },
        GraphProto: {
          fields: {
            node: { rule: "repeated", type: "NodeProto", id: 1 },
            name: { type: "string", id: 2 },
            initializer: { rule: "repeated", type: "TensorProto", id: 5 },
            doc_string: { type: "string", id: 10 },
            input: { rule: "repeated", type: "ValueInfoProto", id: 11 },
            output: { rule: "repeated", type: "ValueInfoProto", id: 12 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: "repeated", type: "int64", id: 1 },
            data_type: { type: "int32", id: 2 },
            name: { type: "string", id: 8 },
            raw_data: { type: "bytes", id: 9 },
            external_data: { rule: "repeated", type: "StringStringEntryProto", id: 13 },
            data_location: { type: "int32", id: 14 },
          },
        },
        TensorShapeProto: {
          fields: { dim: { rule: "repeated", type: "Dimension", id: 1 } },
          nested: { Dimension: { oneofs: { value: { oneof: ["dim_value", "dim_param"] } }, fields: { dim_value: { type: "int64", id: 1 }, dim_param: { type: "string", id: 2 } } } },
        },
        TypeProto: {
          oneofs: { value: { oneof: ["tensor_type"] } },
          fields: { tensor_type: { type: "Tensor", id: 1 } },
          nested: { Tensor: { fields: { elem_type: { type: "int32", id: 1 }, shape: { type: "TensorShapeProto", id: 2 } } } },
        },
      },
    },
  },
});

export const ModelProto = root.lookupType("onnx.ModelProto");

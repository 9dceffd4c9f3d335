// What a service author names from the lower layers when using this API, re-exported here so
// `import Bus` is all a service needs. The rest of BusZMQ and BusWire (and the kernel) stays out
// of reach of `import Bus` (README, Layers).

// BusSupport whole: its public declarations are exactly what services use (Locked, Logger,
// MonotonicTime, WallClock, FreePorts, Thread.startNamed), the rest is `package`, and
// MonotonicTime's operators are found only with the module in scope, not the type alone.
@_exported import BusSupport

// The wire types the client and service API takes, returns and throws.
@_exported import enum BusWire.BusError
@_exported import struct BusWire.Endpoints
@_exported import struct BusWire.ErrorBody
@_exported import struct BusWire.EventMeta
@_exported import struct BusWire.ReplyBody
@_exported import struct BusWire.ReplyMeta
@_exported import struct BusWire.RequestBody
@_exported import struct BusWire.RequestMeta
@_exported import struct BusWire.RetainedValue
@_exported import struct BusWire.ServiceSnapshot
@_exported import enum BusWire.Status
@_exported import enum BusWire.Topic
@_exported import struct BusWire.TopicPattern

// CURVE credentials (in ClientSecurity) and the libzmq error a BusError can carry.
@_exported import struct BusZMQ.CurveKeyPair
@_exported import enum BusZMQ.SecurityError
@_exported import struct BusZMQ.ZMQError

"""Configuration files as Kafka reads them: Java .properties (properties), a
node's server.properties (server: log dirs, node id, listeners, the quorum
settings) and a client's --command-config (client: TLS, SASL, timeouts).
Parsing and meaning only: nothing here opens a log dir or a socket.
"""

"""The wire: how quorumctl talks to one Kafka node, and finds the node to ask.
It knows bytes, connections and retries, not what the answers mean: the live
questions built on it are live/'s, the models they fill are domain/'s. Messages
are declared with schema/; a --command-config is read by config/. Its modules:

messages        the message descriptions (quorumctl.schema) and the API table
framing         framing and request/response headers
access          the connection options of a command line (ClusterAccess): the bootstrap
                addresses and the client configuration, loaded there alone
connection      one node: TCP, TLS, ApiVersions, SASL, requests with timeouts
kerrors         Kafka's error codes and the exception that carries one
client          bootstrap, active-controller discovery, retries
security/       TLS contexts (tls, with jks: our JKS reader), SASL PLAIN/SCRAM (sasl),
                OAUTHBEARER tokens (oauth), GSSAPI (kerberos)
"""

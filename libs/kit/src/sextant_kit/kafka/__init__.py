"""Kafka adapters (aiokafka): `producer.KafkaPublisher` (the `Publisher` port),
`consumer.KafkaSource` (the `RecordSource` port), `admin` (topics, offsets).

Factories set the project's rules once: producers `acks="all"`, idempotence on, a small linger;
consumers with manual commits (`enable_auto_commit=False`) starting at the earliest offset.
"""

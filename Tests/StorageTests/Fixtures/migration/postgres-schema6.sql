--
-- PostgreSQL database dump
--

\restrict HGXPVouvQRm3CzaZlUBfgCESg5KOGHZqnB7HdClyqGFsqnJFOATwjtXaIsW8mxZ

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: campaign_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_counts (
    campaign bigint NOT NULL,
    state smallint NOT NULL,
    shard integer NOT NULL,
    n bigint NOT NULL
);


--
-- Name: campaign_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_events (
    seq bigint NOT NULL,
    campaign bigint NOT NULL,
    batch bigint
);


--
-- Name: campaign_events_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.campaign_events ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.campaign_events_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: campaigns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaigns (
    seq bigint NOT NULL,
    id text NOT NULL,
    created_at double precision NOT NULL,
    dry_run boolean NOT NULL,
    body bytea NOT NULL,
    apns_id_prefix text NOT NULL,
    devices integer NOT NULL,
    finished_at double precision,
    app text DEFAULT ''::text NOT NULL,
    environment text DEFAULT ''::text NOT NULL,
    owner text DEFAULT ''::text NOT NULL,
    send_at double precision,
    expires_at double precision,
    control smallint DEFAULT 0 NOT NULL,
    controlled_at double precision,
    push_type text DEFAULT 'alert'::text NOT NULL,
    topic text DEFAULT ''::text NOT NULL,
    priority integer DEFAULT 10 NOT NULL,
    expiration bigint,
    collapse_id text,
    lane smallint DEFAULT 0 NOT NULL,
    rate_per_second double precision,
    rate_paid_until double precision,
    served_turn bigint DEFAULT 0 NOT NULL,
    channel text
);


--
-- Name: campaigns_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.campaigns ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.campaigns_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: count_shards; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.count_shards
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deliveries (
    campaign bigint NOT NULL,
    idx integer NOT NULL,
    token text NOT NULL,
    body bytea,
    state smallint NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_at double precision DEFAULT 0 NOT NULL,
    status integer,
    reason text,
    apns_id text,
    timestamp_ms bigint,
    finished_at double precision,
    lease_owner text,
    lease_until double precision,
    lease bigint DEFAULT 0 NOT NULL,
    apns_unique_id text
);


--
-- Name: feedback_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.feedback_outbox (
    seq bigint NOT NULL,
    token text NOT NULL,
    timestamp_ms bigint NOT NULL,
    reason text NOT NULL,
    batch bigint
);


--
-- Name: feedback_outbox_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.feedback_outbox ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.feedback_outbox_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    key text NOT NULL,
    request_sha256 text NOT NULL,
    campaign_id text NOT NULL,
    created_at double precision NOT NULL
);


--
-- Name: instances; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.instances (
    owner text NOT NULL,
    started_at double precision NOT NULL,
    heartbeat_at double precision NOT NULL
);


--
-- Name: live_activity_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_tokens (
    app text NOT NULL,
    token text NOT NULL,
    kind smallint NOT NULL,
    activity text DEFAULT ''::text NOT NULL,
    registered_at_ms bigint NOT NULL
);


--
-- Name: provider_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_tokens (
    team_id text NOT NULL,
    key_id text NOT NULL,
    key_sha256 text NOT NULL,
    token text,
    issued_at bigint,
    paused_until bigint
);


--
-- Name: pushgate_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pushgate_schema (
    version integer NOT NULL
);


--
-- Name: tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tokens (
    token text NOT NULL,
    dead_at_ms bigint,
    dead_reason text,
    recorded_at double precision,
    registered_at_ms bigint,
    app text DEFAULT ''::text NOT NULL
);


--
-- Name: webhook_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_leases (
    outbox text NOT NULL,
    owner text NOT NULL,
    until double precision NOT NULL
);


--
-- Data for Name: campaign_counts; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.campaign_counts (campaign, state, shard, n) FROM stdin;
1	0	1	0
1	1	1	0
1	5	1	1
2	6	1	1
2	5	1	1
2	0	1	0
2	3	1	295
2	2	1	0
2	1	1	0
2	4	1	3
3	2	2	1
3	0	3	-12
3	1	3	0
3	3	3	12
3	0	2	1910
3	1	2	0
3	3	2	89
\.


--
-- Data for Name: campaign_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.campaign_events (seq, campaign, batch) FROM stdin;
1	1	\N
2	2	\N
\.


--
-- Data for Name: campaigns; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.campaigns (seq, id, created_at, dry_run, body, apns_id_prefix, devices, finished_at, app, environment, owner, send_at, expires_at, control, controlled_at, push_type, topic, priority, expiration, collapse_id, lane, rate_per_second, rate_paid_until, served_turn, channel) FROM stdin;
1	5def3371-47fd-4fe8-986c-f925b5c7dd1f	1796462061.5780315	f	\\x7b22617073223a7b22616c657274223a7b227469746c65223a2253616c65222c22626f6479223a22546f646179206f6e6c79227d7d2c22646565706c696e6b223a2268747470733a2f2f6578616d706c652e636f6d2f70726f647563742f3432222c22726f757465223a7b226e616d65223a2270726f64756374222c22706172616d73223a7b226964223a223432227d7d7d	5def3371-47fd-4fe8-986c-	1	1796462061.6045103	default	sandbox		\N	\N	0	\N	alert	com.example.shop	10	\N	\N	0	\N	\N	1	\N
2	b010776b-d05b-4588-8e48-7f23893d9f3c	1796462061.6427417	f	\\x7b22617073223a7b22616c657274223a7b227469746c65223a2253616c65222c22626f6479223a22546f646179206f6e6c79227d7d2c22646565706c696e6b223a2268747470733a2f2f6578616d706c652e636f6d2f70726f647563742f3432222c22726f757465223a7b226e616d65223a2270726f64756374222c22706172616d73223a7b226964223a223432227d7d7d	b010776b-d05b-4588-8e48-	300	1796462063.1101468	default	sandbox		\N	\N	0	\N	alert	com.example.shop	10	\N	\N	1	\N	\N	68	\N
3	46a40e8e-f06f-40c5-a62a-a5239ee76eb5	1796462063.252497	f	\\x7b22617073223a7b22616c657274223a7b227469746c65223a2253616c65222c22626f6479223a22546f646179206f6e6c79227d7d2c22646565706c696e6b223a2268747470733a2f2f6578616d706c652e636f6d2f70726f647563742f3432222c22726f757465223a7b226e616d65223a2270726f64756374222c22706172616d73223a7b226964223a223432227d7d7d	46a40e8e-f06f-40c5-a62a-	2000	\N	default	sandbox		\N	\N	0	1796462065.9428825	alert	com.example.shop	10	\N	\N	1	40	1796462064.8412397	55	\N
\.


--
-- Data for Name: deliveries; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.deliveries (campaign, idx, token, body, state, attempts, next_at, status, reason, apns_id, timestamp_ms, finished_at, lease_owner, lease_until, lease, apns_unique_id) FROM stdin;
1	0	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff895440	\N	5	1	1796462061.6045103	410	Unregistered	\N	1765000000000	1796462061.6045103	\N	\N	1	\N
2	3	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff895440	\N	6	0	0	\N	Unregistered	\N	1765000000000	1796462061.6427505	\N	\N	0	\N
2	0	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4240	\N	3	1	1796462061.6592684	200	\N	b010776b-d05b-4588-8e48-000000000000	\N	1796462061.6592684	\N	\N	1	7d1889f5-ec01-4a2d-abfa-b945ce140967
2	1	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4241	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000001	\N	1796462061.6620622	\N	\N	1	4e049203-8c41-4079-8c72-1da66440dd33
2	11	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff424b	\N	3	1	1796462061.6685758	200	\N	b010776b-d05b-4588-8e48-00000000000b	\N	1796462061.6685758	\N	\N	1	98df9976-201d-4fe2-aa45-128c8b58d71a
2	12	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff424c	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-00000000000c	\N	1796462061.6750078	\N	\N	1	6b29651f-1bd8-4082-9fd4-35cfe232324e
2	13	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff424d	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-00000000000d	\N	1796462061.6750078	\N	\N	1	c79139e1-2663-41b8-80b9-427bcb00237a
2	14	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff424e	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-00000000000e	\N	1796462061.6750078	\N	\N	1	d14d10ed-abd8-4888-9642-f540f75ca2e8
2	15	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff424f	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-00000000000f	\N	1796462061.6750078	\N	\N	1	28aa3792-c890-4c64-b973-286240e61a4f
2	21	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4255	\N	3	1	1796462061.6846437	200	\N	b010776b-d05b-4588-8e48-000000000015	\N	1796462061.6846437	\N	\N	1	a8e8e019-7826-4ad8-885f-ce765b67d76b
2	22	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4256	\N	3	1	1796462061.6846437	200	\N	b010776b-d05b-4588-8e48-000000000016	\N	1796462061.6846437	\N	\N	1	32246d90-c671-4c2b-bb79-ad765ec474e2
2	23	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4257	\N	3	1	1796462061.689985	200	\N	b010776b-d05b-4588-8e48-000000000017	\N	1796462061.689985	\N	\N	1	b7d16268-e3bf-400f-a368-85019e53044e
2	24	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4258	\N	3	1	1796462061.689985	200	\N	b010776b-d05b-4588-8e48-000000000018	\N	1796462061.689985	\N	\N	1	d4ae0eaf-8cc0-4da6-bdfe-90fa8673be93
2	31	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff425f	\N	3	1	1796462061.698943	200	\N	b010776b-d05b-4588-8e48-00000000001f	\N	1796462061.698943	\N	\N	1	b670f99a-d2df-4b3f-9bcb-2ac18f617424
2	32	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4260	\N	3	1	1796462061.698943	200	\N	b010776b-d05b-4588-8e48-000000000020	\N	1796462061.698943	\N	\N	1	d2390777-97b3-4848-9534-c575ae020ad6
2	33	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4261	\N	3	1	1796462061.698943	200	\N	b010776b-d05b-4588-8e48-000000000021	\N	1796462061.698943	\N	\N	1	0906848a-7c13-4c3c-b8bd-2973b2060b86
2	34	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4262	\N	3	1	1796462061.698943	200	\N	b010776b-d05b-4588-8e48-000000000022	\N	1796462061.698943	\N	\N	1	2d990210-ab8e-4774-a62a-77ebdef0e79f
2	35	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4263	\N	3	1	1796462061.7048562	200	\N	b010776b-d05b-4588-8e48-000000000023	\N	1796462061.7048562	\N	\N	1	56423a34-fa97-4f2d-baa4-e2a560a24eac
2	36	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4264	\N	3	1	1796462061.7048562	200	\N	b010776b-d05b-4588-8e48-000000000024	\N	1796462061.7048562	\N	\N	1	4c0d84e3-5635-49e8-8bb1-592ad45bf7ed
2	37	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4265	\N	3	1	1796462061.7048562	200	\N	b010776b-d05b-4588-8e48-000000000025	\N	1796462061.7048562	\N	\N	1	da684a19-36f5-4d47-b2e8-39cce13f225a
2	38	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4266	\N	3	1	1796462061.7117429	200	\N	b010776b-d05b-4588-8e48-000000000026	\N	1796462061.7117429	\N	\N	1	1483c3f1-7153-465f-a7d6-e57050df6a33
2	39	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4267	\N	3	1	1796462061.7157226	200	\N	b010776b-d05b-4588-8e48-000000000027	\N	1796462061.7157226	\N	\N	1	48deec43-dc5f-4ef9-92dd-a809c5edc5e1
2	44	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff426c	\N	3	1	1796462061.7204971	200	\N	b010776b-d05b-4588-8e48-00000000002c	\N	1796462061.7204971	\N	\N	1	c46bd965-cd6e-436b-aa7b-b3c89f942aaa
2	45	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff426d	\N	3	1	1796462061.7204971	200	\N	b010776b-d05b-4588-8e48-00000000002d	\N	1796462061.7204971	\N	\N	1	32d1c3bb-46f3-4725-835d-a7cd357f08e4
2	46	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff426e	\N	3	1	1796462061.7267272	200	\N	b010776b-d05b-4588-8e48-00000000002e	\N	1796462061.7267272	\N	\N	1	5f54eb7a-b872-467d-9f63-236cee528f25
2	47	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff426f	\N	3	1	1796462061.7267272	200	\N	b010776b-d05b-4588-8e48-00000000002f	\N	1796462061.7267272	\N	\N	1	78c85364-053c-456c-8d3d-5765267faa18
2	49	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4271	\N	3	1	1796462061.7316773	200	\N	b010776b-d05b-4588-8e48-000000000031	\N	1796462061.7316773	\N	\N	1	6d28b2cb-fdd0-465c-b4dc-99417fb591a2
2	50	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4272	\N	3	1	1796462061.7316773	200	\N	b010776b-d05b-4588-8e48-000000000032	\N	1796462061.7316773	\N	\N	1	c9fc7423-d446-4c9f-80b5-7ead7f1263db
2	51	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4273	\N	3	1	1796462061.7316773	200	\N	b010776b-d05b-4588-8e48-000000000033	\N	1796462061.7316773	\N	\N	1	a68dc34b-4bf8-4c68-94c2-adb804e1dd70
2	40	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4268	\N	4	3	1796462063.1101468	503	ServiceUnavailable	\N	\N	1796462063.1101468	\N	\N	3	\N
2	57	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4279	\N	3	1	1796462061.7414532	200	\N	b010776b-d05b-4588-8e48-000000000039	\N	1796462061.7414532	\N	\N	1	f6911053-4a54-4a06-8637-09831291f879
2	58	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff427a	\N	3	1	1796462061.7414532	200	\N	b010776b-d05b-4588-8e48-00000000003a	\N	1796462061.7414532	\N	\N	1	107d5701-7480-4057-918c-45b4de06ca1c
2	62	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff427e	\N	3	1	1796462061.747836	200	\N	b010776b-d05b-4588-8e48-00000000003e	\N	1796462061.747836	\N	\N	1	606b6856-e059-4663-ba09-54325e2aebb9
2	63	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff427f	\N	3	1	1796462061.747836	200	\N	b010776b-d05b-4588-8e48-00000000003f	\N	1796462061.747836	\N	\N	1	21ea613d-be5c-4814-99ff-86d40ddd4d9d
2	64	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4280	\N	3	1	1796462061.747836	200	\N	b010776b-d05b-4588-8e48-000000000040	\N	1796462061.747836	\N	\N	1	4354011f-cbbe-43d3-8763-2b198a7f726f
2	70	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4286	\N	3	1	1796462061.7544494	200	\N	b010776b-d05b-4588-8e48-000000000046	\N	1796462061.7544494	\N	\N	1	e8aa596f-f01d-4349-949d-704fbe8c60ad
2	71	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4287	\N	3	1	1796462061.7544494	200	\N	b010776b-d05b-4588-8e48-000000000047	\N	1796462061.7544494	\N	\N	1	5af5471a-6c70-45d5-ac6c-694461b18f74
2	73	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4289	\N	3	1	1796462061.7578547	200	\N	b010776b-d05b-4588-8e48-000000000049	\N	1796462061.7578547	\N	\N	1	be69e6e6-a428-4435-96ea-e07093a7c26d
2	74	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff428a	\N	3	1	1796462061.7578547	200	\N	b010776b-d05b-4588-8e48-00000000004a	\N	1796462061.7578547	\N	\N	1	86c6fca1-0b23-4a9a-867a-6c56b3e5322a
2	75	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff428b	\N	3	1	1796462061.7578547	200	\N	b010776b-d05b-4588-8e48-00000000004b	\N	1796462061.7578547	\N	\N	1	43412b1c-8132-476a-bddf-57a18732ff68
2	78	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff428e	\N	3	1	1796462061.761117	200	\N	b010776b-d05b-4588-8e48-00000000004e	\N	1796462061.761117	\N	\N	1	46264fbe-ad4e-4066-a7b7-e99a4d078648
2	79	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff428f	\N	3	1	1796462061.761117	200	\N	b010776b-d05b-4588-8e48-00000000004f	\N	1796462061.761117	\N	\N	1	5e211a40-0090-4228-ba30-2a9c6c445532
2	86	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4296	\N	3	1	1796462061.768121	200	\N	b010776b-d05b-4588-8e48-000000000056	\N	1796462061.768121	\N	\N	1	5c600327-dc5f-4b1b-b8ff-831f75d86f2f
2	87	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4297	\N	3	1	1796462061.768121	200	\N	b010776b-d05b-4588-8e48-000000000057	\N	1796462061.768121	\N	\N	1	479699fc-30e7-4405-8941-4a10c736a2d5
2	88	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4298	\N	3	1	1796462061.768121	200	\N	b010776b-d05b-4588-8e48-000000000058	\N	1796462061.768121	\N	\N	1	1d4b9838-ba75-41a6-a5c7-1d2cc3e9b31d
2	89	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4299	\N	3	1	1796462061.7712615	200	\N	b010776b-d05b-4588-8e48-000000000059	\N	1796462061.7712615	\N	\N	1	30660d6b-e44a-42e2-913f-21ad1c5d86fd
2	90	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff429a	\N	3	1	1796462061.7712615	200	\N	b010776b-d05b-4588-8e48-00000000005a	\N	1796462061.7712615	\N	\N	1	ab92aea6-f7be-4ff5-a333-627f19f69d20
2	91	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff429b	\N	3	1	1796462061.7712615	200	\N	b010776b-d05b-4588-8e48-00000000005b	\N	1796462061.7712615	\N	\N	1	214d6fa4-5d6a-45d2-80e6-9a02abc13a77
2	92	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff429c	\N	3	1	1796462061.7712615	200	\N	b010776b-d05b-4588-8e48-00000000005c	\N	1796462061.7712615	\N	\N	1	85d1d9ed-dfa0-491b-a88d-1c81c7d84edf
2	94	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff429e	\N	3	1	1796462061.7740166	200	\N	b010776b-d05b-4588-8e48-00000000005e	\N	1796462061.7740166	\N	\N	1	17a20ff3-02ed-43c4-966b-a7c9999eae13
2	95	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff429f	\N	3	1	1796462061.7740166	200	\N	b010776b-d05b-4588-8e48-00000000005f	\N	1796462061.7740166	\N	\N	1	81a20f3f-876c-44ef-91b1-b1c17d31c7c6
2	102	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a6	\N	3	1	1796462061.783506	200	\N	b010776b-d05b-4588-8e48-000000000066	\N	1796462061.783506	\N	\N	1	d7699d10-fb3e-42ee-ab24-aeb20de8f517
2	103	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a7	\N	3	1	1796462061.783506	200	\N	b010776b-d05b-4588-8e48-000000000067	\N	1796462061.783506	\N	\N	1	7d8c8e9b-64d4-43a6-b1fd-b87e9264de65
2	104	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a8	\N	3	1	1796462061.783506	200	\N	b010776b-d05b-4588-8e48-000000000068	\N	1796462061.783506	\N	\N	1	75e91434-ae64-468f-84bf-fc454d8cbaab
2	105	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a9	\N	3	1	1796462061.7875922	200	\N	b010776b-d05b-4588-8e48-000000000069	\N	1796462061.7875922	\N	\N	1	cbbea73a-29a5-42f2-a37b-7a489238754a
2	106	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42aa	\N	3	1	1796462061.7875922	200	\N	b010776b-d05b-4588-8e48-00000000006a	\N	1796462061.7875922	\N	\N	1	26b985d3-b4e8-4499-9d6f-3fd6af3f4ec7
2	107	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ab	\N	3	1	1796462061.7875922	200	\N	b010776b-d05b-4588-8e48-00000000006b	\N	1796462061.7875922	\N	\N	1	4422f937-11d1-4303-8ff3-71e61762b8b4
2	108	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ac	\N	3	1	1796462061.7912045	200	\N	b010776b-d05b-4588-8e48-00000000006c	\N	1796462061.7912045	\N	\N	1	e3b965ba-bcab-4159-b86c-89e1ff4a275e
2	109	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ad	\N	3	1	1796462061.7912045	200	\N	b010776b-d05b-4588-8e48-00000000006d	\N	1796462061.7912045	\N	\N	1	51f40416-ba4f-4a6b-9e7d-13994cf89eb7
2	110	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ae	\N	3	1	1796462061.7912045	200	\N	b010776b-d05b-4588-8e48-00000000006e	\N	1796462061.7912045	\N	\N	1	4db0d221-1e54-425a-8009-24cbde846a36
2	113	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b1	\N	3	1	1796462061.7978199	200	\N	b010776b-d05b-4588-8e48-000000000071	\N	1796462061.7978199	\N	\N	1	509b7d6c-d4d4-451e-9bf8-1df3b08828e5
2	116	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b4	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-000000000074	\N	1796462061.8055298	\N	\N	1	43dd5876-1c3d-41af-b79b-cd56419d5a5f
2	117	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b5	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-000000000075	\N	1796462061.8055298	\N	\N	1	96b1e945-1660-4f47-86bb-8f2db1f6889b
2	121	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b9	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-000000000079	\N	1796462061.8055298	\N	\N	1	5edf2ca3-aa5e-4951-a7f9-a92fe129b41f
2	132	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c4	\N	3	1	1796462061.825397	200	\N	b010776b-d05b-4588-8e48-000000000084	\N	1796462061.825397	\N	\N	1	a198cae1-db81-4e30-a14f-507b23ec47ae
2	133	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c5	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-000000000085	\N	1796462061.8282142	\N	\N	1	79dcbfd0-5ba0-49a2-88a2-382408f3271f
2	134	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c6	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-000000000086	\N	1796462061.8282142	\N	\N	1	563d191c-dbd2-478f-8a97-b42a0cdb3509
2	135	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c7	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-000000000087	\N	1796462061.8282142	\N	\N	1	461798e4-6dd2-43e5-88fd-d148afa13df3
2	136	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c8	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-000000000088	\N	1796462061.8282142	\N	\N	1	2bfd200a-49a6-4a26-8a20-b3e572d66536
2	137	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c9	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-000000000089	\N	1796462061.8282142	\N	\N	1	78b0278d-d883-4672-83c0-35d563df8b9b
2	140	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42cc	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-00000000008c	\N	1796462061.836608	\N	\N	1	bea3735a-01de-4512-817e-2449105d5356
2	148	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d4	\N	3	1	1796462061.843259	200	\N	b010776b-d05b-4588-8e48-000000000094	\N	1796462061.843259	\N	\N	1	86bb765e-78e0-4ced-99a7-023360fda07c
2	149	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d5	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-000000000095	\N	1796462061.8460734	\N	\N	1	fa050457-be15-46c9-89a9-4fc5742cfd7c
2	150	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d6	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-000000000096	\N	1796462061.8460734	\N	\N	1	c90ba150-dd79-4cb7-a2de-408f8151b89a
2	151	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d7	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-000000000097	\N	1796462061.8460734	\N	\N	1	8934e6ea-314c-45d3-bb91-73f62ac99eeb
2	152	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d8	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-000000000098	\N	1796462061.8460734	\N	\N	1	1bab558c-b657-4d09-8505-7be3f6783b39
2	153	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d9	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-000000000099	\N	1796462061.8460734	\N	\N	1	f83ca51e-7e27-4e23-aa0f-e1e924608dce
2	154	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42da	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-00000000009a	\N	1796462061.8460734	\N	\N	1	ce122ef4-3328-44ed-b434-90ae852f1e57
2	155	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42db	\N	3	1	1796462061.8460734	200	\N	b010776b-d05b-4588-8e48-00000000009b	\N	1796462061.8460734	\N	\N	1	1b1915a2-1bf0-4c84-a58a-3ee77d27a06f
2	156	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42dc	\N	3	1	1796462061.8540509	200	\N	b010776b-d05b-4588-8e48-00000000009c	\N	1796462061.8540509	\N	\N	1	c4dc56cc-e174-4c2e-9797-4110b4f0edee
2	164	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e4	\N	3	1	1796462061.8624787	200	\N	b010776b-d05b-4588-8e48-0000000000a4	\N	1796462061.8624787	\N	\N	1	6a0bf1c6-31d7-482a-9447-60d43e3f245e
2	165	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e5	\N	3	1	1796462061.8624787	200	\N	b010776b-d05b-4588-8e48-0000000000a5	\N	1796462061.8624787	\N	\N	1	feb0f5c1-530d-4198-9861-6b8f62689a9e
2	166	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e6	\N	3	1	1796462061.8624787	200	\N	b010776b-d05b-4588-8e48-0000000000a6	\N	1796462061.8624787	\N	\N	1	c909f3ee-ce17-405b-a756-318aa260beef
2	167	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e7	\N	3	1	1796462061.8624787	200	\N	b010776b-d05b-4588-8e48-0000000000a7	\N	1796462061.8624787	\N	\N	1	8da3ab51-2c39-44b3-8c42-4ee8d3b08141
2	168	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e8	\N	3	1	1796462061.8653786	200	\N	b010776b-d05b-4588-8e48-0000000000a8	\N	1796462061.8653786	\N	\N	1	23211126-2d7e-405a-8ef8-f352c3fceabd
2	169	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e9	\N	3	1	1796462061.8653786	200	\N	b010776b-d05b-4588-8e48-0000000000a9	\N	1796462061.8653786	\N	\N	1	d292ea17-f0a9-4d7b-a305-26ba3358dd8c
2	172	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ec	\N	3	1	1796462061.872402	200	\N	b010776b-d05b-4588-8e48-0000000000ac	\N	1796462061.872402	\N	\N	1	95136eb0-681b-428b-aa4f-6485bf04eba5
2	176	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f0	\N	3	1	1796462061.872402	200	\N	b010776b-d05b-4588-8e48-0000000000b0	\N	1796462061.872402	\N	\N	1	79952cea-ebb7-4036-9b4a-588b38a6e5e2
2	178	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f2	\N	3	1	1796462061.8756278	200	\N	b010776b-d05b-4588-8e48-0000000000b2	\N	1796462061.8756278	\N	\N	1	9ac0ef1c-28c1-4dad-952e-42f42d450258
2	179	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f3	\N	3	1	1796462061.8756278	200	\N	b010776b-d05b-4588-8e48-0000000000b3	\N	1796462061.8756278	\N	\N	1	a4630775-c1d8-45d7-9f1a-a639bb4399e2
2	186	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42fa	\N	3	1	1796462061.888004	200	\N	b010776b-d05b-4588-8e48-0000000000ba	\N	1796462061.888004	\N	\N	1	93b0aab5-e888-489c-8951-e8cb3fe989bb
2	187	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42fb	\N	3	1	1796462061.888004	200	\N	b010776b-d05b-4588-8e48-0000000000bb	\N	1796462061.888004	\N	\N	1	dfe1e788-2279-493b-a805-a91113e0c434
2	188	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42fc	\N	3	1	1796462061.890941	200	\N	b010776b-d05b-4588-8e48-0000000000bc	\N	1796462061.890941	\N	\N	1	6fca3d44-5407-4fe9-b2e1-a178022bef1c
2	189	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42fd	\N	3	1	1796462061.8952167	200	\N	b010776b-d05b-4588-8e48-0000000000bd	\N	1796462061.8952167	\N	\N	1	97f5ea31-1b4a-4cd5-907e-020257178677
2	190	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42fe	\N	3	1	1796462061.8952167	200	\N	b010776b-d05b-4588-8e48-0000000000be	\N	1796462061.8952167	\N	\N	1	4c168741-6514-4406-9748-daa996cdfdc6
2	191	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ff	\N	3	1	1796462061.8952167	200	\N	b010776b-d05b-4588-8e48-0000000000bf	\N	1796462061.8952167	\N	\N	1	c004ee3b-7be9-41e8-8bfe-5a7d5e680bec
2	192	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4300	\N	3	1	1796462061.8952167	200	\N	b010776b-d05b-4588-8e48-0000000000c0	\N	1796462061.8952167	\N	\N	1	282eeae6-eb55-42eb-a3a0-787c1eea4ae3
2	196	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4304	\N	3	1	1796462061.8980358	200	\N	b010776b-d05b-4588-8e48-0000000000c4	\N	1796462061.8980358	\N	\N	1	bdd3cc29-fbde-4cb0-a5c0-49abd1167650
2	197	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4305	\N	3	1	1796462061.8980358	200	\N	b010776b-d05b-4588-8e48-0000000000c5	\N	1796462061.8980358	\N	\N	1	46bc4d3e-81f8-487c-8fc6-59cb8d1f5841
2	204	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff430c	\N	3	1	1796462061.903162	200	\N	b010776b-d05b-4588-8e48-0000000000cc	\N	1796462061.903162	\N	\N	1	d80222d4-4eff-4520-a50d-c8ba7abbc5d9
2	205	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff430d	\N	3	1	1796462061.9094963	200	\N	b010776b-d05b-4588-8e48-0000000000cd	\N	1796462061.9094963	\N	\N	1	3b409adb-8c03-4edf-9b1a-d2e3ba820436
2	206	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff430e	\N	3	1	1796462061.9094963	200	\N	b010776b-d05b-4588-8e48-0000000000ce	\N	1796462061.9094963	\N	\N	1	b6538b4c-96b4-47c0-816f-8cd07f314cf7
2	207	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff430f	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000cf	\N	1796462061.912237	\N	\N	1	5cb0f9dc-5a00-49ae-aed0-be42d2ca69d1
2	208	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4310	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000d0	\N	1796462061.912237	\N	\N	1	d91a825f-b51c-4fad-a55f-40d358953840
2	209	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4311	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000d1	\N	1796462061.912237	\N	\N	1	4f91d75e-124d-4660-a6e2-c5a6bcd922c8
2	210	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4312	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000d2	\N	1796462061.912237	\N	\N	1	f6b0a6d7-5def-4ff4-97c3-34eb1be313cd
2	214	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4316	\N	3	1	1796462061.9150105	200	\N	b010776b-d05b-4588-8e48-0000000000d6	\N	1796462061.9150105	\N	\N	1	286582f1-49b0-4765-87f3-2579e72a574f
2	215	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4317	\N	3	1	1796462061.9150105	200	\N	b010776b-d05b-4588-8e48-0000000000d7	\N	1796462061.9150105	\N	\N	1	09f58503-be8a-48b1-abf6-fd904088471e
2	223	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff431f	\N	3	1	1796462061.9239304	200	\N	b010776b-d05b-4588-8e48-0000000000df	\N	1796462061.9239304	\N	\N	1	b1139dc5-31fa-4d87-9517-4cf091b8ffc8
2	224	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4320	\N	3	1	1796462061.9239304	200	\N	b010776b-d05b-4588-8e48-0000000000e0	\N	1796462061.9239304	\N	\N	1	4ace48a4-711a-47a1-9ab0-5bf4154a2161
2	225	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4321	\N	3	1	1796462061.9284177	200	\N	b010776b-d05b-4588-8e48-0000000000e1	\N	1796462061.9284177	\N	\N	1	864d82e7-45bd-428f-bd69-c6cd45747062
2	226	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4322	\N	3	1	1796462061.9284177	200	\N	b010776b-d05b-4588-8e48-0000000000e2	\N	1796462061.9284177	\N	\N	1	5163f1d5-3e54-4a68-8c80-a17515acd248
2	227	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4323	\N	3	1	1796462061.9284177	200	\N	b010776b-d05b-4588-8e48-0000000000e3	\N	1796462061.9284177	\N	\N	1	7beb7a8f-6dd2-49c2-9e46-c4883d3ee0e3
2	230	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4326	\N	3	1	1796462061.9322293	200	\N	b010776b-d05b-4588-8e48-0000000000e6	\N	1796462061.9322293	\N	\N	1	d76e464f-89f1-465b-a1dd-5a19a1a9b406
2	234	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff432a	\N	3	1	1796462061.939449	200	\N	b010776b-d05b-4588-8e48-0000000000ea	\N	1796462061.939449	\N	\N	1	390b1dfc-34d3-4dbd-a84b-2909cf6f0d31
2	235	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff432b	\N	3	1	1796462061.939449	200	\N	b010776b-d05b-4588-8e48-0000000000eb	\N	1796462061.939449	\N	\N	1	67d77629-0cec-4345-8413-c782ec74b1b4
2	236	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff432c	\N	3	1	1796462061.939449	200	\N	b010776b-d05b-4588-8e48-0000000000ec	\N	1796462061.939449	\N	\N	1	86e10071-7822-4bbf-8f18-9a745767b1c9
2	239	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff432f	\N	3	1	1796462061.9439588	200	\N	b010776b-d05b-4588-8e48-0000000000ef	\N	1796462061.9439588	\N	\N	1	e3b949ee-72f8-4ab4-b80a-f39991862a68
2	240	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4330	\N	3	1	1796462061.9439588	200	\N	b010776b-d05b-4588-8e48-0000000000f0	\N	1796462061.9439588	\N	\N	1	f1b40ece-6726-4d43-9485-66ddc8360641
2	241	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4331	\N	3	1	1796462061.9466786	200	\N	b010776b-d05b-4588-8e48-0000000000f1	\N	1796462061.9466786	\N	\N	1	72820ab6-5331-4e0c-8904-63eab61edddb
2	248	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4338	\N	3	1	1796462061.950775	200	\N	b010776b-d05b-4588-8e48-0000000000f8	\N	1796462061.950775	\N	\N	1	f4da3c2b-bfaf-43d8-9c38-9f2bafeda030
2	249	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4339	\N	3	1	1796462061.950775	200	\N	b010776b-d05b-4588-8e48-0000000000f9	\N	1796462061.950775	\N	\N	1	779780ac-75e6-4402-9ee7-ac0b3fef4907
2	250	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff433a	\N	3	1	1796462061.9553556	200	\N	b010776b-d05b-4588-8e48-0000000000fa	\N	1796462061.9553556	\N	\N	1	2193b6a0-bd8e-4b71-86e3-f45decd1244a
2	251	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff433b	\N	3	1	1796462061.9553556	200	\N	b010776b-d05b-4588-8e48-0000000000fb	\N	1796462061.9553556	\N	\N	1	d07919b0-a5db-414d-a20f-095949e5acd4
2	252	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff433c	\N	3	1	1796462061.9553556	200	\N	b010776b-d05b-4588-8e48-0000000000fc	\N	1796462061.9553556	\N	\N	1	834247ea-99d2-47ac-8aff-999f2b3fdbd0
2	253	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff433d	\N	3	1	1796462061.9553556	200	\N	b010776b-d05b-4588-8e48-0000000000fd	\N	1796462061.9553556	\N	\N	1	10f3a35a-1748-4643-9b76-b80c1028980d
2	254	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff433e	\N	3	1	1796462061.9618964	200	\N	b010776b-d05b-4588-8e48-0000000000fe	\N	1796462061.9618964	\N	\N	1	82cbf845-3f1c-4fd8-9db8-8a79061fb4a2
2	259	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4343	\N	3	1	1796462061.9618964	200	\N	b010776b-d05b-4588-8e48-000000000103	\N	1796462061.9618964	\N	\N	1	7acfe563-12ed-4166-a8c7-1db3789d8b6d
2	263	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4347	\N	3	1	1796462061.969749	200	\N	b010776b-d05b-4588-8e48-000000000107	\N	1796462061.969749	\N	\N	1	51fe19f3-36aa-4243-84ce-6cda5244a7ca
2	264	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4348	\N	3	1	1796462061.969749	200	\N	b010776b-d05b-4588-8e48-000000000108	\N	1796462061.969749	\N	\N	1	943b5b2c-151c-481d-b604-edf1cba26989
2	265	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4349	\N	3	1	1796462061.969749	200	\N	b010776b-d05b-4588-8e48-000000000109	\N	1796462061.969749	\N	\N	1	3488604b-a360-40ff-b925-d8ce6ba7a79c
2	266	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff434a	\N	3	1	1796462061.969749	200	\N	b010776b-d05b-4588-8e48-00000000010a	\N	1796462061.969749	\N	\N	1	1ad764ad-7e85-4500-9972-38df4b7985f3
2	269	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff434d	\N	3	1	1796462061.972931	200	\N	b010776b-d05b-4588-8e48-00000000010d	\N	1796462061.972931	\N	\N	1	450120f6-5fd5-494d-90fd-aa6c57cd57aa
2	270	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff434e	\N	3	1	1796462061.972931	200	\N	b010776b-d05b-4588-8e48-00000000010e	\N	1796462061.972931	\N	\N	1	481e05bc-427b-4440-a75f-728b1cf1a212
2	271	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff434f	\N	3	1	1796462061.972931	200	\N	b010776b-d05b-4588-8e48-00000000010f	\N	1796462061.972931	\N	\N	1	c2ba9b46-7a94-48d6-910c-821aa1af5d83
2	272	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4350	\N	3	1	1796462061.9780488	200	\N	b010776b-d05b-4588-8e48-000000000110	\N	1796462061.9780488	\N	\N	1	8a465c59-fbd5-4680-92f3-73e5b88181d3
2	278	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4356	\N	3	1	1796462061.980667	200	\N	b010776b-d05b-4588-8e48-000000000116	\N	1796462061.980667	\N	\N	1	333296d4-3c48-4a5d-a1f6-e2d81ed81b99
2	279	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4357	\N	3	1	1796462061.98346	200	\N	b010776b-d05b-4588-8e48-000000000117	\N	1796462061.98346	\N	\N	1	49391c4b-3731-409e-a93e-7b6289b4b334
2	280	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4358	\N	3	1	1796462061.98346	200	\N	b010776b-d05b-4588-8e48-000000000118	\N	1796462061.98346	\N	\N	1	2a59ab38-08a3-4087-895d-b46fde8fdff3
2	281	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4359	\N	3	1	1796462061.989369	200	\N	b010776b-d05b-4588-8e48-000000000119	\N	1796462061.989369	\N	\N	1	172561c7-16fe-4fcc-a10b-eacd4d58865b
2	282	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff435a	\N	3	1	1796462061.989369	200	\N	b010776b-d05b-4588-8e48-00000000011a	\N	1796462061.989369	\N	\N	1	88f2157b-2913-4f08-b4c5-9fae3d41303c
2	283	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff435b	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-00000000011b	\N	1796462061.9921372	\N	\N	1	6c65d372-b978-4a77-820c-1330a858b1ef
2	284	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff435c	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-00000000011c	\N	1796462061.9921372	\N	\N	1	d8753874-c0ce-4fa9-ba89-5f4e6d720058
2	2	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4242	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000002	\N	1796462061.6620622	\N	\N	1	fc9dab62-5016-4871-b405-7d2b9fb831f8
2	4	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4244	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000004	\N	1796462061.6620622	\N	\N	1	c47e79be-3d67-4a7b-b4ea-4f2b96605ae4
2	5	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4245	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000005	\N	1796462061.6620622	\N	\N	1	b4c8c52b-74d7-4a63-bf2c-63048d4b2257
2	6	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4246	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000006	\N	1796462061.6620622	\N	\N	1	a2b37d83-3e96-4c49-bea9-cab147246a7e
2	7	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4247	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000007	\N	1796462061.6620622	\N	\N	1	29f9609b-b011-4c34-8997-ad49de890af4
2	8	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4248	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000008	\N	1796462061.6620622	\N	\N	1	b9b51136-b559-4207-8a2d-348eba4f4eb8
2	9	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4249	\N	3	1	1796462061.6620622	200	\N	b010776b-d05b-4588-8e48-000000000009	\N	1796462061.6620622	\N	\N	1	556a2c4a-07c4-45b1-801f-8627a5f10898
2	10	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff424a	\N	4	1	1796462061.6620622	400	BadDeviceToken	\N	\N	1796462061.6620622	\N	\N	1	\N
2	16	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4250	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-000000000010	\N	1796462061.6750078	\N	\N	1	ce801680-cd2a-4a7c-a220-b9070a34cbed
2	17	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4251	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-000000000011	\N	1796462061.6750078	\N	\N	1	bce6627d-b662-4a63-8062-7441e50cc663
2	18	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4252	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-000000000012	\N	1796462061.6750078	\N	\N	1	b538afda-0791-46ed-8c53-1c2d01f697de
2	19	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4253	\N	3	1	1796462061.6750078	200	\N	b010776b-d05b-4588-8e48-000000000013	\N	1796462061.6750078	\N	\N	1	da732fed-2ac4-4654-85de-f146df9db67a
2	20	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4254	\N	5	1	1796462061.6750078	410	Unregistered	\N	1765100000000	1796462061.6750078	\N	\N	1	\N
2	25	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4259	\N	3	1	1796462061.689985	200	\N	b010776b-d05b-4588-8e48-000000000019	\N	1796462061.689985	\N	\N	1	1927f79e-9c9a-436b-a456-25d7794060db
2	26	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff425a	\N	3	1	1796462061.689985	200	\N	b010776b-d05b-4588-8e48-00000000001a	\N	1796462061.689985	\N	\N	1	689a2472-9290-40f9-bb34-cf75eb81bfbe
2	27	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff425b	\N	3	1	1796462061.689985	200	\N	b010776b-d05b-4588-8e48-00000000001b	\N	1796462061.689985	\N	\N	1	0ad1ae67-421b-43e2-8956-99109c25f384
2	28	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff425c	\N	3	1	1796462061.698943	200	\N	b010776b-d05b-4588-8e48-00000000001c	\N	1796462061.698943	\N	\N	1	3de0643d-dbae-4b1b-a301-5ed84dd4a582
2	29	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff425d	\N	3	1	1796462061.698943	200	\N	b010776b-d05b-4588-8e48-00000000001d	\N	1796462061.698943	\N	\N	1	8e263970-1261-4c63-8900-227d7f0ddf85
2	286	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff435e	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-00000000011e	\N	1796462061.9921372	\N	\N	1	a73f76af-84ec-481b-8dfa-2cc09215fb19
2	287	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff435f	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-00000000011f	\N	1796462061.9921372	\N	\N	1	50b59734-975b-4062-9b6e-a2a03a438cd2
2	288	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4360	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-000000000120	\N	1796462061.9921372	\N	\N	1	5af0fb2f-b48f-466f-bbbb-4c31bb7ffea6
2	289	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4361	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-000000000121	\N	1796462061.9921372	\N	\N	1	3b56792f-c95e-42b5-bfcc-9cebb39dcccd
2	290	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4362	\N	3	1	1796462061.9961038	200	\N	b010776b-d05b-4588-8e48-000000000122	\N	1796462061.9961038	\N	\N	1	0193d83c-da5f-4a46-ad53-08b191c99ab5
2	291	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4363	\N	3	1	1796462061.9961038	200	\N	b010776b-d05b-4588-8e48-000000000123	\N	1796462061.9961038	\N	\N	1	a7de2fb0-6a87-48bd-98ba-c183d3d49207
2	292	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4364	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-000000000124	\N	1796462062.000115	\N	\N	1	b7963abb-b013-4280-b00c-e05bf9287b83
2	293	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4365	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-000000000125	\N	1796462062.000115	\N	\N	1	b5dcd370-1a4d-4359-b8ea-c1cd1c0c41ae
2	294	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4366	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-000000000126	\N	1796462062.000115	\N	\N	1	5ffb552c-fee4-4745-ab12-6a5312669130
2	295	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4367	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-000000000127	\N	1796462062.000115	\N	\N	1	a9c73be3-d9e2-4216-8faf-be5e171727fb
2	299	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff436b	\N	4	1	1796462062.007656	400	DeviceTokenNotForTopic	\N	\N	1796462062.007656	\N	\N	1	\N
2	41	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4269	\N	3	1	1796462061.7157226	200	\N	b010776b-d05b-4588-8e48-000000000029	\N	1796462061.7157226	\N	\N	1	5bb143b6-473f-400d-90ed-e353bdd68007
2	42	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff426a	\N	3	1	1796462061.7157226	200	\N	b010776b-d05b-4588-8e48-00000000002a	\N	1796462061.7157226	\N	\N	1	27a03c78-ca80-4830-860c-2fda3bf635d8
2	43	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff426b	\N	3	1	1796462061.7157226	200	\N	b010776b-d05b-4588-8e48-00000000002b	\N	1796462061.7157226	\N	\N	1	3f60a4da-7116-478d-937a-8fe99eb743a2
2	48	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4270	\N	3	1	1796462061.7267272	200	\N	b010776b-d05b-4588-8e48-000000000030	\N	1796462061.7267272	\N	\N	1	33334ead-0d7d-4d28-b582-e30c00b5c38e
2	52	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4274	\N	3	1	1796462061.7316773	200	\N	b010776b-d05b-4588-8e48-000000000034	\N	1796462061.7316773	\N	\N	1	6bd6b264-8216-40f7-b836-8390a4959173
2	53	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4275	\N	3	1	1796462061.7316773	200	\N	b010776b-d05b-4588-8e48-000000000035	\N	1796462061.7316773	\N	\N	1	8f4c6e63-5ff1-4ed8-b1d4-dc2525beb0b1
2	54	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4276	\N	3	1	1796462061.7369492	200	\N	b010776b-d05b-4588-8e48-000000000036	\N	1796462061.7369492	\N	\N	1	f4d6bdde-b80d-43b1-adb9-00e8c14b0b82
2	55	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4277	\N	3	1	1796462061.7369492	200	\N	b010776b-d05b-4588-8e48-000000000037	\N	1796462061.7369492	\N	\N	1	a9a54733-dbb5-40c4-baea-83a85e86bfcc
2	56	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4278	\N	3	1	1796462061.7369492	200	\N	b010776b-d05b-4588-8e48-000000000038	\N	1796462061.7369492	\N	\N	1	1855c139-991e-4de0-87a6-a7dcc07b1e25
2	59	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff427b	\N	3	1	1796462061.7414532	200	\N	b010776b-d05b-4588-8e48-00000000003b	\N	1796462061.7414532	\N	\N	1	a5cec918-0e96-4528-84a0-8095fb8b1c25
2	60	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff427c	\N	3	1	1796462061.7414532	200	\N	b010776b-d05b-4588-8e48-00000000003c	\N	1796462061.7414532	\N	\N	1	99e17bb3-5a40-496d-bbc5-6d1ca0ef44ea
2	61	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff427d	\N	3	1	1796462061.7414532	200	\N	b010776b-d05b-4588-8e48-00000000003d	\N	1796462061.7414532	\N	\N	1	6fa8c2d4-4f31-481b-a459-e93aade3a595
2	65	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4281	\N	3	1	1796462061.751261	200	\N	b010776b-d05b-4588-8e48-000000000041	\N	1796462061.751261	\N	\N	1	460dc1bc-a08d-45b5-a14f-2694c607a99f
2	66	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4282	\N	3	1	1796462061.751261	200	\N	b010776b-d05b-4588-8e48-000000000042	\N	1796462061.751261	\N	\N	1	eff901ea-69d1-46d4-a538-3806e8763abc
2	67	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4283	\N	3	1	1796462061.751261	200	\N	b010776b-d05b-4588-8e48-000000000043	\N	1796462061.751261	\N	\N	1	dc606c62-3051-48ea-9a4e-c35130d63898
2	68	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4284	\N	3	1	1796462061.751261	200	\N	b010776b-d05b-4588-8e48-000000000044	\N	1796462061.751261	\N	\N	1	65b611d5-eb2c-4be5-882d-ec4a2a6c352a
2	69	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4285	\N	3	1	1796462061.751261	200	\N	b010776b-d05b-4588-8e48-000000000045	\N	1796462061.751261	\N	\N	1	e56a4cbb-cfd6-4143-b831-a598fc9892d8
2	72	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4288	\N	3	1	1796462061.7544494	200	\N	b010776b-d05b-4588-8e48-000000000048	\N	1796462061.7544494	\N	\N	1	15f915bd-83b9-44a7-8138-784b15367ca5
2	76	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff428c	\N	3	1	1796462061.7578547	200	\N	b010776b-d05b-4588-8e48-00000000004c	\N	1796462061.7578547	\N	\N	1	da1b9320-32f3-40f2-ab15-778d2be016ee
2	77	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff428d	\N	3	1	1796462061.7578547	200	\N	b010776b-d05b-4588-8e48-00000000004d	\N	1796462061.7578547	\N	\N	1	ebe71430-d870-4c5b-adcb-78c8650d1874
2	80	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4290	\N	3	1	1796462061.761117	200	\N	b010776b-d05b-4588-8e48-000000000050	\N	1796462061.761117	\N	\N	1	9f33a38a-87b5-4d3b-b5a5-26763a4cc273
2	81	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4291	\N	3	1	1796462061.765247	200	\N	b010776b-d05b-4588-8e48-000000000051	\N	1796462061.765247	\N	\N	1	97cd07d2-a311-44da-b3cc-f71c08348099
2	82	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4292	\N	3	1	1796462061.765247	200	\N	b010776b-d05b-4588-8e48-000000000052	\N	1796462061.765247	\N	\N	1	c3bfce9f-4948-4846-b784-2fff3e6ac1cc
2	83	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4293	\N	3	1	1796462061.765247	200	\N	b010776b-d05b-4588-8e48-000000000053	\N	1796462061.765247	\N	\N	1	179ecc02-39c1-42d1-9aca-b16532ca6c02
2	84	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4294	\N	3	1	1796462061.765247	200	\N	b010776b-d05b-4588-8e48-000000000054	\N	1796462061.765247	\N	\N	1	8a74f717-0573-4268-8974-2a5c2049f305
2	85	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4295	\N	3	1	1796462061.765247	200	\N	b010776b-d05b-4588-8e48-000000000055	\N	1796462061.765247	\N	\N	1	6d02c01e-eeac-472f-b0e2-7f1edaf8035c
2	93	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff429d	\N	3	1	1796462061.7712615	200	\N	b010776b-d05b-4588-8e48-00000000005d	\N	1796462061.7712615	\N	\N	1	ae4cd445-1875-4703-81f3-be9d6a0f7d10
2	96	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a0	\N	3	1	1796462061.7740166	200	\N	b010776b-d05b-4588-8e48-000000000060	\N	1796462061.7740166	\N	\N	1	f1545994-1f29-4582-932f-66287e220bd5
2	97	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a1	\N	3	1	1796462061.78054	200	\N	b010776b-d05b-4588-8e48-000000000061	\N	1796462061.78054	\N	\N	1	6f6a8c1b-3745-489c-96b1-ccf587d8317b
2	100	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a4	\N	3	1	1796462061.783506	200	\N	b010776b-d05b-4588-8e48-000000000064	\N	1796462061.783506	\N	\N	1	256dc197-ee25-4e95-bc79-89929a5014d1
2	101	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a5	\N	3	1	1796462061.783506	200	\N	b010776b-d05b-4588-8e48-000000000065	\N	1796462061.783506	\N	\N	1	f1fd3a46-de96-47ce-963e-9fc22161291e
2	30	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff425e	\N	3	1	1796462061.890941	200	\N	b010776b-d05b-4588-8e48-00000000001e	\N	1796462061.890941	\N	\N	1	26163d24-3af2-4b72-b57e-a6bb0dd3fcd6
2	98	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a2	\N	3	1	1796462061.78054	200	\N	b010776b-d05b-4588-8e48-000000000062	\N	1796462061.78054	\N	\N	1	54307de0-2a30-4f52-8e53-a46d354757b1
2	99	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42a3	\N	3	1	1796462061.78054	200	\N	b010776b-d05b-4588-8e48-000000000063	\N	1796462061.78054	\N	\N	1	62a2c0f2-d54a-4f2c-818a-c5029bc15ba8
2	111	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42af	\N	3	1	1796462061.7912045	200	\N	b010776b-d05b-4588-8e48-00000000006f	\N	1796462061.7912045	\N	\N	1	cd1c71c4-4106-4174-9a83-f9b5d1b615be
2	112	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b0	\N	3	1	1796462061.7912045	200	\N	b010776b-d05b-4588-8e48-000000000070	\N	1796462061.7912045	\N	\N	1	70c1430f-0f5e-46e1-8327-01d1321b3f4e
2	114	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b2	\N	3	1	1796462061.7978199	200	\N	b010776b-d05b-4588-8e48-000000000072	\N	1796462061.7978199	\N	\N	1	1d7ccb54-e560-445f-997a-1203049162dc
2	115	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b3	\N	3	1	1796462061.7978199	200	\N	b010776b-d05b-4588-8e48-000000000073	\N	1796462061.7978199	\N	\N	1	0132f152-c294-4fec-97b3-6211a19a5acb
2	118	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b6	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-000000000076	\N	1796462061.8055298	\N	\N	1	44daeb03-e29e-4469-abbd-bf322416cdfb
2	119	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b7	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-000000000077	\N	1796462061.8055298	\N	\N	1	b144eff9-ddbd-4909-99f6-f1b6a6bb0fff
2	120	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42b8	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-000000000078	\N	1796462061.8055298	\N	\N	1	3d01defa-b214-4f9d-ad80-54327cf46288
2	122	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ba	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-00000000007a	\N	1796462061.8055298	\N	\N	1	e562d1b1-8c66-4ae4-859d-1d07bf8f4eba
2	123	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42bb	\N	3	1	1796462061.8055298	200	\N	b010776b-d05b-4588-8e48-00000000007b	\N	1796462061.8055298	\N	\N	1	13f0cd70-78ea-4e62-b932-ad971d79dc5b
2	124	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42bc	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-00000000007c	\N	1796462061.8136418	\N	\N	1	3c0a1cef-61d0-4508-ac2a-d3604e8652c9
2	125	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42bd	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-00000000007d	\N	1796462061.8136418	\N	\N	1	9a4badb3-0324-4630-b030-b08f4f501132
2	126	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42be	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-00000000007e	\N	1796462061.8136418	\N	\N	1	d840a0ad-0b0e-45dc-9a7e-63c298a30b9b
2	127	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42bf	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-00000000007f	\N	1796462061.8136418	\N	\N	1	b683461a-6050-481b-9b9f-6c9dbf65cf20
2	128	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c0	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-000000000080	\N	1796462061.8136418	\N	\N	1	956511fe-78dd-4c83-8ec4-bd54d357c37c
2	129	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c1	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-000000000081	\N	1796462061.8136418	\N	\N	1	1d2e3ca9-8f9f-4d50-a284-f53fee8fab2f
2	130	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c2	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-000000000082	\N	1796462061.8136418	\N	\N	1	4d57cc56-3233-4cf2-8d03-1a7a5de7b71a
2	131	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42c3	\N	3	1	1796462061.8136418	200	\N	b010776b-d05b-4588-8e48-000000000083	\N	1796462061.8136418	\N	\N	1	861fb780-1311-4140-82db-9eebc6be864b
2	138	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ca	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-00000000008a	\N	1796462061.8282142	\N	\N	1	83c17627-cd4a-423c-856c-b067fd7bb1b4
2	139	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42cb	\N	3	1	1796462061.8282142	200	\N	b010776b-d05b-4588-8e48-00000000008b	\N	1796462061.8282142	\N	\N	1	02d2dbc1-a781-47d9-884a-c14378bc8e05
2	141	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42cd	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-00000000008d	\N	1796462061.836608	\N	\N	1	02b91094-99ab-467c-80f1-c12098f73439
2	142	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ce	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-00000000008e	\N	1796462061.836608	\N	\N	1	f4641ed8-6b94-4e77-8e98-75ac83ba910b
2	143	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42cf	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-00000000008f	\N	1796462061.836608	\N	\N	1	726b842e-64f7-4cc8-916b-d6ea56401f51
2	144	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d0	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-000000000090	\N	1796462061.836608	\N	\N	1	b5ddcab5-d875-445e-9863-e345ad5867b9
2	145	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d1	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-000000000091	\N	1796462061.836608	\N	\N	1	8638cd0f-441d-4c54-9b2a-73df53670013
2	146	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d2	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-000000000092	\N	1796462061.836608	\N	\N	1	07a8b3af-07a7-4c7d-af1f-8a667667f4b3
2	147	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42d3	\N	3	1	1796462061.836608	200	\N	b010776b-d05b-4588-8e48-000000000093	\N	1796462061.836608	\N	\N	1	8de4c6b8-efc7-4000-8c4a-7500e5d7ce53
2	160	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e0	\N	3	1	1796462061.858195	200	\N	b010776b-d05b-4588-8e48-0000000000a0	\N	1796462061.858195	\N	\N	1	2e1a5418-a1b1-43d2-968d-efbc3224a733
2	161	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e1	\N	3	1	1796462061.858195	200	\N	b010776b-d05b-4588-8e48-0000000000a1	\N	1796462061.858195	\N	\N	1	fa79976b-ec65-42c7-bcd4-d80764e1b02e
2	162	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e2	\N	3	1	1796462061.858195	200	\N	b010776b-d05b-4588-8e48-0000000000a2	\N	1796462061.858195	\N	\N	1	7ff529ab-5176-4f76-b81d-e300dfa94015
2	277	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4355	\N	3	1	1796462061.980667	200	\N	b010776b-d05b-4588-8e48-000000000115	\N	1796462061.980667	\N	\N	1	3f86f061-74fb-4ce0-b5b7-4d49f4f54682
2	285	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff435d	\N	3	1	1796462061.9921372	200	\N	b010776b-d05b-4588-8e48-00000000011d	\N	1796462061.9921372	\N	\N	1	7496fb29-6fa1-4a2f-b3b3-700652eae031
2	157	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42dd	\N	3	1	1796462061.8540509	200	\N	b010776b-d05b-4588-8e48-00000000009d	\N	1796462061.8540509	\N	\N	1	8d303bc5-7dce-4b32-9769-4a2f6f2d77b1
2	158	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42de	\N	3	1	1796462061.8540509	200	\N	b010776b-d05b-4588-8e48-00000000009e	\N	1796462061.8540509	\N	\N	1	88fbe217-3d0e-4a6d-968f-682f533f1e0c
2	159	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42df	\N	3	1	1796462061.8540509	200	\N	b010776b-d05b-4588-8e48-00000000009f	\N	1796462061.8540509	\N	\N	1	7a2d1aac-3b62-4443-a933-1030cd84655f
2	163	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42e3	\N	3	1	1796462061.858195	200	\N	b010776b-d05b-4588-8e48-0000000000a3	\N	1796462061.858195	\N	\N	1	73fc99bc-bb6e-4b9a-aa51-89fe453dbf44
2	170	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ea	\N	3	1	1796462061.867934	200	\N	b010776b-d05b-4588-8e48-0000000000aa	\N	1796462061.867934	\N	\N	1	31756a42-e169-4e92-bcc2-52841683d6c2
2	171	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42eb	\N	3	1	1796462061.867934	200	\N	b010776b-d05b-4588-8e48-0000000000ab	\N	1796462061.867934	\N	\N	1	81298054-6df7-46a3-9a78-85f1c961c241
2	173	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ed	\N	3	1	1796462061.872402	200	\N	b010776b-d05b-4588-8e48-0000000000ad	\N	1796462061.872402	\N	\N	1	061c455f-cff1-4fad-a9ea-64404b0efce3
2	174	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ee	\N	3	1	1796462061.872402	200	\N	b010776b-d05b-4588-8e48-0000000000ae	\N	1796462061.872402	\N	\N	1	e6d37a34-0803-437b-bf8b-8c9acbac65ab
2	175	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42ef	\N	3	1	1796462061.872402	200	\N	b010776b-d05b-4588-8e48-0000000000af	\N	1796462061.872402	\N	\N	1	f84428a2-d593-4366-91d2-16ed79bd26d4
2	177	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f1	\N	3	1	1796462061.872402	200	\N	b010776b-d05b-4588-8e48-0000000000b1	\N	1796462061.872402	\N	\N	1	4b298db2-faae-437f-835d-721cf7195581
2	180	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f4	\N	3	1	1796462061.8797622	200	\N	b010776b-d05b-4588-8e48-0000000000b4	\N	1796462061.8797622	\N	\N	1	46083fde-cd3e-4bb2-a1ed-05beb5328a67
2	181	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f5	\N	3	1	1796462061.8797622	200	\N	b010776b-d05b-4588-8e48-0000000000b5	\N	1796462061.8797622	\N	\N	1	294780b0-d881-4a9c-892f-10135e5f7ed1
2	182	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f6	\N	3	1	1796462061.888004	200	\N	b010776b-d05b-4588-8e48-0000000000b6	\N	1796462061.888004	\N	\N	1	ae115950-9b76-4d26-86ce-1216a5222cdf
2	183	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f7	\N	3	1	1796462061.888004	200	\N	b010776b-d05b-4588-8e48-0000000000b7	\N	1796462061.888004	\N	\N	1	494f5861-0e7a-4014-b508-c2f1bb0c1b30
2	184	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f8	\N	3	1	1796462061.888004	200	\N	b010776b-d05b-4588-8e48-0000000000b8	\N	1796462061.888004	\N	\N	1	faed4f23-e41d-4be2-821c-f591544701e9
2	185	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff42f9	\N	3	1	1796462061.888004	200	\N	b010776b-d05b-4588-8e48-0000000000b9	\N	1796462061.888004	\N	\N	1	22570561-50e5-405d-a4d2-24d6510114b4
2	193	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4301	\N	3	1	1796462061.8952167	200	\N	b010776b-d05b-4588-8e48-0000000000c1	\N	1796462061.8952167	\N	\N	1	ec759753-dc42-4743-b4ca-93829139ce18
2	194	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4302	\N	3	1	1796462061.8952167	200	\N	b010776b-d05b-4588-8e48-0000000000c2	\N	1796462061.8952167	\N	\N	1	7b269be6-cb34-45bb-8aa2-640bf3eeb241
2	195	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4303	\N	3	1	1796462061.8980358	200	\N	b010776b-d05b-4588-8e48-0000000000c3	\N	1796462061.8980358	\N	\N	1	20782365-3b86-4cb5-8154-61d84bee87e8
2	198	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4306	\N	3	1	1796462061.9006438	200	\N	b010776b-d05b-4588-8e48-0000000000c6	\N	1796462061.9006438	\N	\N	1	f815797c-ef25-47d8-8558-72d61189ae14
2	199	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4307	\N	3	1	1796462061.903162	200	\N	b010776b-d05b-4588-8e48-0000000000c7	\N	1796462061.903162	\N	\N	1	2d8e2f3c-6c9a-4a70-95f5-e784a76f0fb1
2	200	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4308	\N	3	1	1796462061.903162	200	\N	b010776b-d05b-4588-8e48-0000000000c8	\N	1796462061.903162	\N	\N	1	7823b36b-0b8d-4b04-84ab-42fb971f9082
2	201	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4309	\N	3	1	1796462061.903162	200	\N	b010776b-d05b-4588-8e48-0000000000c9	\N	1796462061.903162	\N	\N	1	cf975669-4ce2-46cc-b4db-1902c38bd1fc
2	202	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff430a	\N	3	1	1796462061.903162	200	\N	b010776b-d05b-4588-8e48-0000000000ca	\N	1796462061.903162	\N	\N	1	7e25f9e1-f264-4d99-b30d-21cb19749681
2	203	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff430b	\N	3	1	1796462061.903162	200	\N	b010776b-d05b-4588-8e48-0000000000cb	\N	1796462061.903162	\N	\N	1	9fc3d100-7c36-4654-9e97-1f0a394013e9
2	211	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4313	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000d3	\N	1796462061.912237	\N	\N	1	e8669d63-bd13-43fe-87cd-939f7875e977
2	212	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4314	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000d4	\N	1796462061.912237	\N	\N	1	037ab5ca-81de-4d41-8b13-52b9228c91c4
2	213	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4315	\N	3	1	1796462061.912237	200	\N	b010776b-d05b-4588-8e48-0000000000d5	\N	1796462061.912237	\N	\N	1	e0d34974-9844-4d87-83f5-c7583bc31a07
2	221	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff431d	\N	3	1	1796462061.9239304	200	\N	b010776b-d05b-4588-8e48-0000000000dd	\N	1796462061.9239304	\N	\N	1	175aa390-0a96-4513-a69e-479513df33d5
2	222	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff431e	\N	3	1	1796462061.9239304	200	\N	b010776b-d05b-4588-8e48-0000000000de	\N	1796462061.9239304	\N	\N	1	2b9f3082-6b71-488b-af5e-0b8438520b21
2	296	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4368	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-000000000128	\N	1796462062.000115	\N	\N	1	7bfd4e07-c31b-4bb2-aaaf-84fd2452447b
2	297	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4369	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-000000000129	\N	1796462062.000115	\N	\N	1	9e5bb550-890f-479b-94ef-dc57653d24ec
2	216	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4318	\N	3	1	1796462061.9192584	200	\N	b010776b-d05b-4588-8e48-0000000000d8	\N	1796462061.9192584	\N	\N	1	ea395ad2-a891-45f3-8716-f3a991015013
2	217	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4319	\N	3	1	1796462061.9192584	200	\N	b010776b-d05b-4588-8e48-0000000000d9	\N	1796462061.9192584	\N	\N	1	b6f202c9-d7f2-4b0f-8d62-8e32cdd6437d
2	218	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff431a	\N	3	1	1796462061.9192584	200	\N	b010776b-d05b-4588-8e48-0000000000da	\N	1796462061.9192584	\N	\N	1	f507188a-0537-43bf-83db-d862000518fc
2	219	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff431b	\N	3	1	1796462061.9192584	200	\N	b010776b-d05b-4588-8e48-0000000000db	\N	1796462061.9192584	\N	\N	1	cbe3bba1-aa5a-4374-936d-3075eb6ecfa0
2	220	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff431c	\N	3	1	1796462061.9192584	200	\N	b010776b-d05b-4588-8e48-0000000000dc	\N	1796462061.9192584	\N	\N	1	1cc3f3d1-c12d-4687-86c7-6dd6cbfb1a2e
2	228	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4324	\N	3	1	1796462061.9284177	200	\N	b010776b-d05b-4588-8e48-0000000000e4	\N	1796462061.9284177	\N	\N	1	3add824e-fb82-4188-b18d-53c9cefaf3f4
2	229	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4325	\N	3	1	1796462061.9284177	200	\N	b010776b-d05b-4588-8e48-0000000000e5	\N	1796462061.9284177	\N	\N	1	6e2f2766-27a8-48d5-a8b7-e9a46d91c811
2	231	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4327	\N	3	1	1796462061.9322293	200	\N	b010776b-d05b-4588-8e48-0000000000e7	\N	1796462061.9322293	\N	\N	1	58c7921a-5532-4612-a5c9-ae3a23e504c7
2	232	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4328	\N	3	1	1796462061.9322293	200	\N	b010776b-d05b-4588-8e48-0000000000e8	\N	1796462061.9322293	\N	\N	1	3feaca7c-1574-4a3f-9282-816a134b6d16
2	233	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4329	\N	3	1	1796462061.9322293	200	\N	b010776b-d05b-4588-8e48-0000000000e9	\N	1796462061.9322293	\N	\N	1	de44d59b-d8ba-4e4f-80be-4baf2d83d23c
2	237	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff432d	\N	3	1	1796462061.939449	200	\N	b010776b-d05b-4588-8e48-0000000000ed	\N	1796462061.939449	\N	\N	1	5944df37-7472-40d2-8632-c7a508183f01
2	238	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff432e	\N	3	1	1796462061.939449	200	\N	b010776b-d05b-4588-8e48-0000000000ee	\N	1796462061.939449	\N	\N	1	0a037bbe-bad7-42e4-ac5c-d7ea758680e7
2	242	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4332	\N	3	1	1796462061.9466786	200	\N	b010776b-d05b-4588-8e48-0000000000f2	\N	1796462061.9466786	\N	\N	1	07ca729c-07ce-4227-b314-6f7e173a833b
2	243	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4333	\N	3	1	1796462061.9466786	200	\N	b010776b-d05b-4588-8e48-0000000000f3	\N	1796462061.9466786	\N	\N	1	6740dc89-2e8d-4044-8c42-06c5bf66687c
2	244	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4334	\N	3	1	1796462061.9466786	200	\N	b010776b-d05b-4588-8e48-0000000000f4	\N	1796462061.9466786	\N	\N	1	b41b84fc-d900-44b6-85f0-6e8a10b1ff5d
2	245	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4335	\N	3	1	1796462061.950775	200	\N	b010776b-d05b-4588-8e48-0000000000f5	\N	1796462061.950775	\N	\N	1	3ab64bbd-268f-4e1a-aed4-f89b8a378da6
2	246	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4336	\N	3	1	1796462061.950775	200	\N	b010776b-d05b-4588-8e48-0000000000f6	\N	1796462061.950775	\N	\N	1	5b0602eb-2dea-43ae-9bee-93b118b0ac03
2	247	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4337	\N	3	1	1796462061.950775	200	\N	b010776b-d05b-4588-8e48-0000000000f7	\N	1796462061.950775	\N	\N	1	02657266-0136-4d69-891d-9278cc64966e
2	255	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff433f	\N	3	1	1796462061.9618964	200	\N	b010776b-d05b-4588-8e48-0000000000ff	\N	1796462061.9618964	\N	\N	1	2111b2ca-270d-44cd-8580-b8e7f5651bce
2	256	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4340	\N	3	1	1796462061.9618964	200	\N	b010776b-d05b-4588-8e48-000000000100	\N	1796462061.9618964	\N	\N	1	af5768cd-566a-49e2-b65f-874a3cd366a8
2	257	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4341	\N	3	1	1796462061.9618964	200	\N	b010776b-d05b-4588-8e48-000000000101	\N	1796462061.9618964	\N	\N	1	f92546de-c603-4894-a97a-67472b76fede
2	258	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4342	\N	3	1	1796462061.9618964	200	\N	b010776b-d05b-4588-8e48-000000000102	\N	1796462061.9618964	\N	\N	1	f1933476-2c86-4f30-b490-9d121db71c95
2	260	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4344	\N	3	1	1796462061.9647465	200	\N	b010776b-d05b-4588-8e48-000000000104	\N	1796462061.9647465	\N	\N	1	0d851337-fb26-4b57-9c95-2ae714809b6b
2	261	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4345	\N	3	1	1796462061.9647465	200	\N	b010776b-d05b-4588-8e48-000000000105	\N	1796462061.9647465	\N	\N	1	48365ec4-1db9-4d69-9e51-a40305ca1612
2	262	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4346	\N	3	1	1796462061.9647465	200	\N	b010776b-d05b-4588-8e48-000000000106	\N	1796462061.9647465	\N	\N	1	de63df22-dc23-4244-9bcf-d1784925e7c3
2	267	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff434b	\N	3	1	1796462061.969749	200	\N	b010776b-d05b-4588-8e48-00000000010b	\N	1796462061.969749	\N	\N	1	ed99eb56-03ff-4ffc-b904-3b59a9b4a85d
2	268	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff434c	\N	3	1	1796462061.969749	200	\N	b010776b-d05b-4588-8e48-00000000010c	\N	1796462061.969749	\N	\N	1	8fafae32-ffa6-42ab-807c-adc34132bc19
2	273	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4351	\N	3	1	1796462061.980667	200	\N	b010776b-d05b-4588-8e48-000000000111	\N	1796462061.980667	\N	\N	1	f3d94371-96c3-40b4-964d-bbc3198e3e15
2	274	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4352	\N	3	1	1796462061.980667	200	\N	b010776b-d05b-4588-8e48-000000000112	\N	1796462061.980667	\N	\N	1	3edd1d73-eadc-44e2-b01f-24a2009f3938
2	275	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4353	\N	3	1	1796462061.980667	200	\N	b010776b-d05b-4588-8e48-000000000113	\N	1796462061.980667	\N	\N	1	261bf375-c349-47e5-85aa-5a4f44bc3e18
2	276	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4354	\N	3	1	1796462061.980667	200	\N	b010776b-d05b-4588-8e48-000000000114	\N	1796462061.980667	\N	\N	1	69c24bc1-4a6d-4f19-80a7-0579e742ff65
2	298	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff436a	\N	3	1	1796462062.000115	200	\N	b010776b-d05b-4588-8e48-00000000012a	\N	1796462062.000115	\N	\N	1	4a4e3298-ed68-4d6c-8276-4484640b85ac
3	10	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e848a	\N	3	1	1796462063.3288114	200	\N	46a40e8e-f06f-40c5-a62a-00000000000a	\N	1796462063.3288114	\N	\N	1	38762339-7d3f-45b4-8dc4-92ba1cc30476
3	11	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e848b	\N	3	1	1796462063.3288114	200	\N	46a40e8e-f06f-40c5-a62a-00000000000b	\N	1796462063.3288114	\N	\N	1	12d43109-a1a5-43dc-bb13-9a52c0f86b73
3	12	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e848c	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-00000000000c	\N	1796462063.337482	\N	\N	1	62391a5d-9b49-4ea6-9808-45546b11133b
3	13	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e848d	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-00000000000d	\N	1796462063.337482	\N	\N	1	f74536ab-7028-4a49-8ed1-e9ee0e317256
3	14	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e848e	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-00000000000e	\N	1796462063.337482	\N	\N	1	a9896881-a8b5-4d64-8c05-33bfdd6bf961
3	15	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e848f	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-00000000000f	\N	1796462063.337482	\N	\N	1	c083b6be-140a-4e2e-88ce-0b8f5008f3d2
3	19	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8493	\N	3	1	1796462063.3440444	200	\N	46a40e8e-f06f-40c5-a62a-000000000013	\N	1796462063.3440444	\N	\N	1	7c049532-6d30-4abd-afad-d18deea8cca6
3	20	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8494	\N	3	1	1796462063.3440444	200	\N	46a40e8e-f06f-40c5-a62a-000000000014	\N	1796462063.3440444	\N	\N	1	a93e7e11-b2c3-4392-96e8-0116a1ddf520
3	28	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e849c	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-00000000001c	\N	1796462063.3545697	\N	\N	1	7ded5764-2510-4a0d-abd5-6b510fe55792
3	29	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e849d	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-00000000001d	\N	1796462063.3545697	\N	\N	1	1177825a-e472-4daf-a634-06da0dbb07cf
3	30	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e849e	\N	3	1	1796462063.3631248	200	\N	46a40e8e-f06f-40c5-a62a-00000000001e	\N	1796462063.3631248	\N	\N	1	47ff9b36-c086-4e50-b6d8-f2500bf8d1bb
3	31	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e849f	\N	3	1	1796462063.3631248	200	\N	46a40e8e-f06f-40c5-a62a-00000000001f	\N	1796462063.3631248	\N	\N	1	55d4b80e-49ed-46bd-9510-8bb3d38aa9a4
3	32	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a0	\N	3	1	1796462063.3631248	200	\N	46a40e8e-f06f-40c5-a62a-000000000020	\N	1796462063.3631248	\N	\N	1	aa0af23e-0563-466f-b7de-5aab8b05e96d
3	33	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a1	\N	3	1	1796462063.367287	200	\N	46a40e8e-f06f-40c5-a62a-000000000021	\N	1796462063.367287	\N	\N	1	75adb98e-3044-4651-bf60-ab1791379246
3	34	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a2	\N	3	1	1796462063.367287	200	\N	46a40e8e-f06f-40c5-a62a-000000000022	\N	1796462063.367287	\N	\N	1	e7ac7834-0dd2-4892-83ed-75c400d53830
3	35	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a3	\N	3	1	1796462063.367287	200	\N	46a40e8e-f06f-40c5-a62a-000000000023	\N	1796462063.367287	\N	\N	1	1e30ff18-104b-4d41-9ced-c9d874ce29fd
3	36	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a4	\N	3	1	1796462063.367287	200	\N	46a40e8e-f06f-40c5-a62a-000000000024	\N	1796462063.367287	\N	\N	1	9e90b679-0572-464f-bee3-8ae6a6009538
3	39	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a7	\N	3	1	1796462063.3716698	200	\N	46a40e8e-f06f-40c5-a62a-000000000027	\N	1796462063.3716698	\N	\N	1	fd480811-02f0-4df6-9c27-5793b6c6e326
3	40	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a8	\N	3	1	1796462063.3716698	200	\N	46a40e8e-f06f-40c5-a62a-000000000028	\N	1796462063.3716698	\N	\N	1	7a0977aa-5ae7-4001-9cbe-43c223537dbc
3	41	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a9	\N	3	1	1796462063.3716698	200	\N	46a40e8e-f06f-40c5-a62a-000000000029	\N	1796462063.3716698	\N	\N	1	9cd3017c-f394-4f42-8978-a67865817b2f
3	42	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84aa	\N	3	1	1796462063.3750389	200	\N	46a40e8e-f06f-40c5-a62a-00000000002a	\N	1796462063.3750389	\N	\N	1	c65ed3e3-a754-4e7c-90cf-f77878f1e7f3
3	43	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ab	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-00000000002b	\N	1796462063.7189994	\N	\N	1	b8996a2c-4df1-4d01-9575-28bdacac307e
3	44	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ac	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-00000000002c	\N	1796462063.7189994	\N	\N	1	dc1d86a2-1fa6-45c4-ac40-975f8bfea62d
3	45	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ad	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-00000000002d	\N	1796462063.7189994	\N	\N	1	514babda-68fd-4c9c-9ead-42e5cbcd3cfa
3	46	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ae	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-00000000002e	\N	1796462063.7189994	\N	\N	1	3a3ddcf8-a53c-4b39-9749-129f2a1b5a2e
3	53	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b5	\N	3	1	1796462063.726956	200	\N	46a40e8e-f06f-40c5-a62a-000000000035	\N	1796462063.726956	\N	\N	1	eeae2e4a-7ff3-465b-a3ee-88c70f4c8bb9
3	54	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b6	\N	3	1	1796462063.730938	200	\N	46a40e8e-f06f-40c5-a62a-000000000036	\N	1796462063.730938	\N	\N	1	1c48b7c0-1564-4743-b7ba-42b9490dc88e
3	55	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b7	\N	3	1	1796462063.730938	200	\N	46a40e8e-f06f-40c5-a62a-000000000037	\N	1796462063.730938	\N	\N	1	388c410e-8d4c-4fea-b3d7-cac4aa65934f
3	102	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	103	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	104	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	105	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	106	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	107	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84eb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	108	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	109	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	110	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	111	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	112	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	113	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	58	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ba	\N	3	1	1796462063.7729	200	\N	46a40e8e-f06f-40c5-a62a-00000000003a	\N	1796462063.7729	\N	\N	1	757428d2-1b2e-4bd6-98be-57652ba04b94
3	60	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84bc	\N	3	1	1796462063.8233364	200	\N	46a40e8e-f06f-40c5-a62a-00000000003c	\N	1796462063.8233364	\N	\N	1	24dc4e0c-2cbd-452f-90f6-b87a33a9a9e8
3	62	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84be	\N	3	1	1796462063.8729007	200	\N	46a40e8e-f06f-40c5-a62a-00000000003e	\N	1796462063.8729007	\N	\N	1	10fba1b7-48b7-4dcf-834e-7c924219006c
3	64	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c0	\N	3	1	1796462063.9229987	200	\N	46a40e8e-f06f-40c5-a62a-000000000040	\N	1796462063.9229987	\N	\N	1	716f39f0-c486-4bea-b979-fbb4039804a8
3	65	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c1	\N	3	1	1796462063.9499285	200	\N	46a40e8e-f06f-40c5-a62a-000000000041	\N	1796462063.9499285	\N	\N	1	acc2dabf-ccd0-4656-9f33-cf0446334ed3
3	67	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c3	\N	3	1	1796462064.0019448	200	\N	46a40e8e-f06f-40c5-a62a-000000000043	\N	1796462064.0019448	\N	\N	1	99329b01-a3aa-4e09-9ac0-6970b1caeac5
3	69	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c5	\N	3	1	1796462064.0535364	200	\N	46a40e8e-f06f-40c5-a62a-000000000045	\N	1796462064.0535364	\N	\N	1	a6c9ea38-f384-4613-be1e-bf47c6cb46cd
3	71	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c7	\N	3	1	1796462064.0997155	200	\N	46a40e8e-f06f-40c5-a62a-000000000047	\N	1796462064.0997155	\N	\N	1	c411d9bf-9bd8-487e-8d6f-b55dde239df4
3	73	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c9	\N	3	1	1796462064.1520097	200	\N	46a40e8e-f06f-40c5-a62a-000000000049	\N	1796462064.1520097	\N	\N	1	4ac25c5e-2c03-40c3-8d63-92bef7ce5018
3	74	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ca	\N	3	1	1796462064.1765223	200	\N	46a40e8e-f06f-40c5-a62a-00000000004a	\N	1796462064.1765223	\N	\N	1	6fcffd68-6964-4828-9b84-fbc84948ca1b
3	76	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84cc	\N	3	1	1796462064.2265239	200	\N	46a40e8e-f06f-40c5-a62a-00000000004c	\N	1796462064.2265239	\N	\N	1	3c77709e-a95f-442b-83c0-62a6352df477
3	78	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ce	\N	3	1	1796462064.2728708	200	\N	46a40e8e-f06f-40c5-a62a-00000000004e	\N	1796462064.2728708	\N	\N	1	c89119ee-9cce-4905-b369-730e3ac06cd3
3	80	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d0	\N	3	1	1796462064.329531	200	\N	46a40e8e-f06f-40c5-a62a-000000000050	\N	1796462064.329531	\N	\N	1	b22c4685-3858-47a2-9719-089747895a60
3	81	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d1	\N	3	1	1796462064.3500047	200	\N	46a40e8e-f06f-40c5-a62a-000000000051	\N	1796462064.3500047	\N	\N	1	00aff0f5-defb-4a30-9dad-bfde29d075d9
3	83	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d3	\N	3	1	1796462064.3992496	200	\N	46a40e8e-f06f-40c5-a62a-000000000053	\N	1796462064.3992496	\N	\N	1	b1a2254f-39d7-4388-9cfb-b34bf6d9dce8
3	85	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d5	\N	3	1	1796462064.4488764	200	\N	46a40e8e-f06f-40c5-a62a-000000000055	\N	1796462064.4488764	\N	\N	1	e59db292-b34d-4680-8cca-ecb274c94495
3	87	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d7	\N	3	1	1796462064.4982886	200	\N	46a40e8e-f06f-40c5-a62a-000000000057	\N	1796462064.4982886	\N	\N	1	d46510e1-5150-4efe-9392-c6f4ae388d82
3	89	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d9	\N	3	1	1796462064.5478723	200	\N	46a40e8e-f06f-40c5-a62a-000000000059	\N	1796462064.5478723	\N	\N	1	29e9c3a9-bd67-4aac-ac04-04d3e2ab09f5
3	90	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84da	\N	3	1	1796462064.573243	200	\N	46a40e8e-f06f-40c5-a62a-00000000005a	\N	1796462064.573243	\N	\N	1	ad8ec85c-745d-41a3-aaf5-1efeff52a30b
3	92	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84dc	\N	3	1	1796462064.6229963	200	\N	46a40e8e-f06f-40c5-a62a-00000000005c	\N	1796462064.6229963	\N	\N	1	698643d4-a7d8-4d87-875e-7a406de7268d
3	94	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84de	\N	3	1	1796462064.6728086	200	\N	46a40e8e-f06f-40c5-a62a-00000000005e	\N	1796462064.6728086	\N	\N	1	3ee89ba0-1d50-497b-9b3f-6cd66184a7ab
3	96	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e0	\N	3	1	1796462064.7228453	200	\N	46a40e8e-f06f-40c5-a62a-000000000060	\N	1796462064.7228453	\N	\N	1	f92a83b5-1dc3-401c-bf0f-7278f4799d61
3	98	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e2	\N	3	1	1796462064.7761958	200	\N	46a40e8e-f06f-40c5-a62a-000000000062	\N	1796462064.7761958	\N	\N	1	4c17920c-f8f5-47e7-bca5-90029ed3cde4
3	99	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e3	\N	3	1	1796462064.798145	200	\N	46a40e8e-f06f-40c5-a62a-000000000063	\N	1796462064.798145	\N	\N	1	7272a13a-849e-415e-84f6-8e52d2a15267
3	101	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e5	\N	3	1	1796462064.8503263	200	\N	46a40e8e-f06f-40c5-a62a-000000000065	\N	1796462064.8503263	\N	\N	1	80f97095-f167-483b-a38b-8f487d4ef0e1
3	114	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	115	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	116	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	117	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	118	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	119	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	120	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	121	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84f9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	122	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84fa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	123	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84fb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	124	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84fc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	125	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84fd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	126	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84fe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	127	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84ff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	128	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8500	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	129	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8501	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	130	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8502	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	131	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8503	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	132	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8504	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	133	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8505	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	134	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8506	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	135	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8507	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	136	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8508	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	137	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8509	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	138	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e850a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	139	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e850b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	140	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e850c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	141	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e850d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	142	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e850e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	143	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e850f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	144	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8510	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	145	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8511	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	146	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8512	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	147	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8513	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	148	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8514	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	149	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8515	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	150	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8516	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	151	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8517	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	152	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8518	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	153	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8519	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	154	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e851a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	155	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e851b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	156	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e851c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	157	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e851d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	158	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e851e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	159	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e851f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	160	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8520	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	161	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8521	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	162	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8522	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	163	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8523	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	164	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8524	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	165	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8525	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	166	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8526	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	167	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8527	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	168	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8528	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	169	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8529	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	170	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e852a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	171	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e852b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	172	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e852c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	173	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e852d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	174	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e852e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	175	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e852f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	176	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8530	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	177	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8531	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	178	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8532	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	179	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8533	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	180	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8534	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	181	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8535	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	182	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8536	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	183	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8537	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	184	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8538	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	185	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8539	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	186	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e853a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	187	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e853b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	188	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e853c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	189	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e853d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	190	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e853e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	191	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e853f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	192	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8540	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	193	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8541	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	194	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8542	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	195	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8543	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	196	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8544	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	197	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8545	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	198	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8546	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	199	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8547	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	200	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8548	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	201	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8549	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	202	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e854a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	203	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e854b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	204	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e854c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	205	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e854d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	206	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e854e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	207	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e854f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	208	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8550	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	209	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8551	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	210	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8552	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	211	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8553	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	212	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8554	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	213	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8555	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	214	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8556	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	215	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8557	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	216	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8558	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	217	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8559	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	218	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e855a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	219	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e855b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	220	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e855c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	221	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e855d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	222	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e855e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	223	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e855f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	224	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8560	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	225	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8561	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	226	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8562	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	227	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8563	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	228	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8564	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	229	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8565	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	230	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8566	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	231	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8567	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	232	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8568	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	233	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8569	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	234	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e856a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	235	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e856b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	236	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e856c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	237	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e856d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	238	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e856e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	239	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e856f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	240	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8570	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	241	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8571	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	242	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8572	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	243	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8573	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	244	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8574	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	245	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8575	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	246	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8576	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	247	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8577	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	248	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8578	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	249	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8579	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	250	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e857a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	251	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e857b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	252	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e857c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	253	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e857d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	254	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e857e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	255	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e857f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	256	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8580	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	257	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8581	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	258	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8582	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	259	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8583	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	260	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8584	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	261	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8585	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	262	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8586	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	263	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8587	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	264	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8588	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	265	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8589	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	266	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e858a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	267	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e858b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	268	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e858c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	269	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e858d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	270	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e858e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	271	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e858f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	272	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8590	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	273	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8591	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	274	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8592	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	275	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8593	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	276	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8594	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	277	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8595	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	278	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8596	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	279	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8597	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	280	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8598	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	281	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8599	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	282	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e859a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	283	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e859b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	284	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e859c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	285	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e859d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	286	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e859e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	287	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e859f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	288	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	289	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	290	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	291	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	292	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	293	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	294	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	295	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	296	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	297	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85a9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	298	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85aa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	299	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	300	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	301	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	302	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	303	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85af	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	304	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	305	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	306	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	307	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	308	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	309	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	310	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	311	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	312	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	313	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85b9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	314	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	315	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85bb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	316	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85bc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	317	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85bd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	318	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85be	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	319	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85bf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	320	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	321	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	322	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	323	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	324	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	325	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	326	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	327	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	328	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	329	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85c9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	330	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	331	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85cb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	332	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85cc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	333	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85cd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	334	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ce	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	335	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85cf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	336	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	337	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	338	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	339	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	340	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	341	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	342	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	343	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	344	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	345	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85d9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	346	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85da	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	347	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85db	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	348	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85dc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	349	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85dd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	350	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85de	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	351	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85df	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	352	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	353	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	354	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	355	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	356	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	357	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	358	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	359	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	360	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	361	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85e9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	362	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	363	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85eb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	364	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	365	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	366	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	367	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	368	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	369	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	370	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	371	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	372	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	373	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	374	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	375	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	376	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	377	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85f9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	378	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85fa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	379	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85fb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	380	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85fc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	381	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85fd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	382	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85fe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	383	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e85ff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	384	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8600	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	385	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8601	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	386	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8602	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	387	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8603	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	388	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8604	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	389	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8605	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	390	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8606	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	391	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8607	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	392	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8608	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	393	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8609	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	394	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e860a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	395	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e860b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	396	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e860c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	397	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e860d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	398	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e860e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	399	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e860f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	400	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8610	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	401	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8611	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	402	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8612	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	403	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8613	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	404	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8614	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	405	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8615	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	406	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8616	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	407	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8617	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	408	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8618	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	409	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8619	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	410	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e861a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	411	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e861b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	412	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e861c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	413	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e861d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	414	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e861e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	415	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e861f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	416	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8620	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	417	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8621	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	418	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8622	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	419	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8623	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	420	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8624	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	421	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8625	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	422	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8626	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	423	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8627	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	424	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8628	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	425	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8629	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	426	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e862a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	427	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e862b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	428	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e862c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	429	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e862d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	430	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e862e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	431	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e862f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	432	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8630	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	433	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8631	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	434	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8632	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	435	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8633	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	436	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8634	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	437	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8635	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	438	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8636	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	439	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8637	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	440	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8638	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	441	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8639	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	442	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e863a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	443	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e863b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	444	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e863c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	445	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e863d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	446	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e863e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	447	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e863f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	448	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8640	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	449	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8641	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	450	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8642	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	451	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8643	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	452	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8644	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	453	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8645	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	454	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8646	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	455	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8647	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	456	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8648	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	457	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8649	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	458	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e864a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	459	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e864b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	460	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e864c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	461	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e864d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	462	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e864e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	463	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e864f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	464	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8650	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	465	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8651	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	466	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8652	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	467	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8653	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	468	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8654	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	469	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8655	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	470	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8656	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	471	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8657	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	472	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8658	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	473	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8659	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	474	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e865a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	475	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e865b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	476	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e865c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	477	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e865d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	478	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e865e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	479	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e865f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	480	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8660	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	481	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8661	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	482	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8662	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	483	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8663	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	484	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8664	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	485	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8665	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	486	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8666	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	487	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8667	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	488	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8668	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	489	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8669	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	490	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e866a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	491	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e866b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	492	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e866c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	493	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e866d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	494	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e866e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	495	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e866f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	496	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8670	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	497	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8671	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	498	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8672	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	499	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8673	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	500	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8674	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	501	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8675	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	502	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8676	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	503	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8677	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	504	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8678	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	505	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8679	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	506	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e867a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	507	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e867b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	508	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e867c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	509	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e867d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	510	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e867e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	511	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e867f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	512	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8680	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	513	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8681	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	514	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8682	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	515	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8683	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	516	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8684	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	517	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8685	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	518	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8686	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	519	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8687	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	520	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8688	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	521	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8689	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	522	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e868a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	523	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e868b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	524	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e868c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	525	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e868d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	526	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e868e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	527	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e868f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	528	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8690	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	529	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8691	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	530	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8692	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	531	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8693	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	532	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8694	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	533	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8695	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	534	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8696	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	535	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8697	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	536	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8698	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	537	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8699	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	538	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e869a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	539	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e869b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	540	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e869c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	541	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e869d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	542	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e869e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	543	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e869f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	544	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	545	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	546	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	547	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	548	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	549	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	550	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	551	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	552	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	553	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86a9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	554	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86aa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	555	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	556	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	557	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	558	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	559	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86af	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	560	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	561	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	562	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	563	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	564	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	565	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	566	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	567	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	568	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	569	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86b9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	570	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	571	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86bb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	572	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86bc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	573	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86bd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	574	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86be	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	575	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86bf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	576	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	577	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	578	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	579	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	580	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	581	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	582	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	583	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	584	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	585	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86c9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	586	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	587	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86cb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	588	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86cc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	589	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86cd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	590	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ce	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	591	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86cf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	592	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	593	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	594	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	595	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	596	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	597	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	598	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	599	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	600	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	601	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86d9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	602	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86da	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	603	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86db	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	604	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86dc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	605	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86dd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	606	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86de	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	607	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86df	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	608	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	609	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	610	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	611	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	612	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	613	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	614	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	615	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	616	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	617	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86e9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	618	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	619	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86eb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	620	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	621	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	622	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	623	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	624	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	625	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	626	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	627	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	628	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	629	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	630	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	631	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	632	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	633	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86f9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	634	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86fa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	635	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86fb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	636	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86fc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	637	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86fd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	638	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86fe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	639	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e86ff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	640	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8700	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	641	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8701	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	642	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8702	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	643	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8703	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	644	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8704	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	645	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8705	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	646	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8706	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	647	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8707	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	648	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8708	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	649	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8709	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	650	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e870a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	651	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e870b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	652	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e870c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	653	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e870d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	654	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e870e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	655	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e870f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	656	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8710	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	657	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8711	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	658	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8712	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	659	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8713	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	660	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8714	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	661	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8715	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	662	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8716	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	663	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8717	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	664	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8718	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	665	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8719	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	666	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e871a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	667	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e871b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	668	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e871c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	669	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e871d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	670	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e871e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	671	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e871f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	672	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8720	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	673	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8721	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	674	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8722	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	675	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8723	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	676	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8724	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	677	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8725	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	678	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8726	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	679	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8727	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	680	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8728	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	681	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8729	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	682	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e872a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	683	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e872b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	684	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e872c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	685	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e872d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	686	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e872e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	687	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e872f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	688	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8730	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	689	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8731	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	690	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8732	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	691	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8733	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	692	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8734	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	693	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8735	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	694	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8736	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	695	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8737	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	696	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8738	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	697	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8739	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	698	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e873a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	699	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e873b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	700	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e873c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	701	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e873d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	702	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e873e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	703	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e873f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	704	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8740	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	705	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8741	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	706	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8742	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	707	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8743	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	708	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8744	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	709	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8745	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	710	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8746	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	711	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8747	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	712	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8748	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	713	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8749	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	714	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e874a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	715	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e874b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	716	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e874c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	717	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e874d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	718	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e874e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	719	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e874f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	720	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8750	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	721	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8751	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	722	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8752	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	723	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8753	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	724	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8754	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	725	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8755	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	726	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8756	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	727	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8757	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	728	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8758	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	729	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8759	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	730	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e875a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	731	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e875b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	732	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e875c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	733	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e875d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	734	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e875e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	735	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e875f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	736	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8760	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	737	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8761	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	738	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8762	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	739	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8763	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	740	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8764	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	741	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8765	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	742	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8766	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	743	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8767	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	744	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8768	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	745	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8769	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	746	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e876a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	747	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e876b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	748	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e876c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	749	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e876d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	750	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e876e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	751	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e876f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	752	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8770	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	753	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8771	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	754	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8772	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	755	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8773	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	756	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8774	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	757	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8775	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	758	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8776	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	759	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8777	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	760	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8778	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	761	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8779	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	762	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e877a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	763	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e877b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	764	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e877c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	765	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e877d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	766	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e877e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	767	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e877f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	768	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8780	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	769	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8781	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	770	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8782	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	771	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8783	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	772	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8784	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	773	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8785	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	774	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8786	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	775	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8787	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	776	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8788	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	777	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8789	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	778	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e878a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	779	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e878b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	780	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e878c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	781	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e878d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	782	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e878e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	783	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e878f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	784	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8790	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	785	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8791	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	786	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8792	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	787	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8793	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	788	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8794	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	789	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8795	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	790	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8796	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	791	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8797	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	792	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8798	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	793	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8799	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	794	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e879a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	795	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e879b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	796	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e879c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	797	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e879d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	798	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e879e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	799	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e879f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	800	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	801	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	802	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	803	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	804	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	805	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	806	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	807	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	808	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	809	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87a9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	810	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87aa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	811	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	812	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	813	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	814	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	815	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87af	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	816	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	817	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	818	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	819	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	820	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	821	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	822	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	823	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	824	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	825	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87b9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	826	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	827	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87bb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	828	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87bc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	829	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87bd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	830	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87be	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	831	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87bf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	832	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	833	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	834	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	835	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	836	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	837	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	838	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	839	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	840	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	841	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87c9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	842	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	843	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87cb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	844	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87cc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	845	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87cd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	846	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ce	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	847	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87cf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	848	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	849	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	850	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	851	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	852	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	853	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	854	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	855	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	856	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	857	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87d9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	858	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87da	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	859	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87db	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	860	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87dc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	861	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87dd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	862	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87de	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	863	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87df	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	864	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	865	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	866	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	867	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	868	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	869	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	870	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	871	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	872	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	873	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87e9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	874	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	875	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87eb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	876	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	877	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	878	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	879	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	880	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	881	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	882	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	883	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	884	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	885	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	886	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	887	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	888	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	889	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87f9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	890	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87fa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	891	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87fb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	892	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87fc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	893	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87fd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	894	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87fe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	895	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e87ff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	896	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8800	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	897	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8801	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	898	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8802	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	899	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8803	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	900	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8804	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	901	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8805	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	902	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8806	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	903	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8807	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	904	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8808	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	905	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8809	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	906	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e880a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	907	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e880b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	908	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e880c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	909	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e880d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	910	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e880e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	911	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e880f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	912	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8810	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	913	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8811	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	914	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8812	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	915	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8813	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	916	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8814	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	917	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8815	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	918	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8816	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	919	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8817	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	920	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8818	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	921	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8819	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	922	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e881a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	923	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e881b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	924	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e881c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	925	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e881d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	926	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e881e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	927	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e881f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	928	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8820	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	929	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8821	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	930	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8822	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	931	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8823	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	932	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8824	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	933	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8825	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	934	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8826	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	935	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8827	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	936	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8828	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	937	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8829	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	938	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e882a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	939	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e882b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	940	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e882c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	941	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e882d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	942	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e882e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	943	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e882f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	944	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8830	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	945	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8831	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	946	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8832	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	947	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8833	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	948	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8834	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	949	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8835	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	950	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8836	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	951	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8837	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	952	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8838	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	953	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8839	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	954	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e883a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	955	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e883b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	956	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e883c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	957	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e883d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	958	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e883e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	959	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e883f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	960	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8840	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	961	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8841	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	962	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8842	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	963	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8843	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	964	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8844	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	965	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8845	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	966	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8846	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	967	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8847	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	968	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8848	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	969	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8849	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	970	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e884a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	971	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e884b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	972	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e884c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	973	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e884d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	974	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e884e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	975	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e884f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	976	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8850	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	977	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8851	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	978	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8852	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	979	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8853	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	980	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8854	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	981	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8855	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	982	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8856	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	983	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8857	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	984	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8858	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	985	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8859	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	986	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e885a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	987	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e885b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	988	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e885c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	989	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e885d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	990	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e885e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	991	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e885f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	992	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8860	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	993	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8861	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	994	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8862	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	995	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8863	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	996	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8864	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	997	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8865	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	998	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8866	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	999	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8867	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1000	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8868	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1001	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8869	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1002	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e886a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1003	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e886b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1004	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e886c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1005	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e886d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1006	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e886e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1007	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e886f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1008	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8870	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1009	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8871	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1010	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8872	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1011	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8873	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1012	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8874	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1013	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8875	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1014	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8876	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1015	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8877	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1016	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8878	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1017	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8879	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1018	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e887a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1019	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e887b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1020	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e887c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1021	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e887d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1022	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e887e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1023	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e887f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1024	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8880	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1025	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8881	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1026	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8882	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1027	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8883	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1028	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8884	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1029	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8885	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1030	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8886	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1031	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8887	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1032	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8888	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1033	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8889	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1034	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e888a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1035	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e888b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1036	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e888c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1037	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e888d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1038	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e888e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1039	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e888f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1040	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8890	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1041	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8891	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1042	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8892	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1043	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8893	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1044	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8894	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1045	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8895	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1046	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8896	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1047	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8897	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1048	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8898	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1049	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8899	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1050	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e889a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1051	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e889b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1052	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e889c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1053	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e889d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1054	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e889e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1055	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e889f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1056	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1057	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1058	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1059	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1060	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1061	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1062	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1063	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1064	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1065	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88a9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1066	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88aa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1067	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1068	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1069	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1070	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1071	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88af	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1072	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1073	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1074	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1075	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1076	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1077	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1078	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1079	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1080	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1081	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88b9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1082	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1083	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88bb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1084	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88bc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1085	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88bd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1086	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88be	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1087	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88bf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1088	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1089	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1090	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1091	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1092	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1093	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1094	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1095	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1096	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1097	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88c9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1098	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1099	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88cb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1100	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88cc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1101	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88cd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1102	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ce	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1103	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88cf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1104	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1105	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1106	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1107	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1108	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1109	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1110	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1111	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1112	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1113	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88d9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1114	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88da	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1115	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88db	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1116	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88dc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1117	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88dd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1118	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88de	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1119	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88df	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1120	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1121	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1122	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1123	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1124	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1125	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1126	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1127	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1128	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1129	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88e9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1130	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1131	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88eb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1132	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1133	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1134	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1135	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1136	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1137	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1138	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1139	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1140	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1141	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1142	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1143	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1144	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1145	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88f9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1146	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88fa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1147	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88fb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1148	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88fc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1149	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88fd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1150	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88fe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1151	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e88ff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1152	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8900	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1153	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8901	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1154	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8902	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1155	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8903	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1156	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8904	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1157	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8905	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1158	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8906	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1159	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8907	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1160	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8908	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1161	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8909	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1162	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e890a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1163	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e890b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1164	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e890c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1165	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e890d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1166	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e890e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1167	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e890f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1168	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8910	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1169	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8911	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1170	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8912	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1171	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8913	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1172	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8914	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1173	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8915	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1174	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8916	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1175	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8917	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1176	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8918	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1177	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8919	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1178	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e891a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1179	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e891b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1180	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e891c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1181	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e891d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1182	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e891e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1183	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e891f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1184	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8920	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1185	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8921	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1186	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8922	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1187	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8923	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1188	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8924	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1189	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8925	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1190	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8926	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1191	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8927	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1192	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8928	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1193	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8929	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1194	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e892a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1195	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e892b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1196	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e892c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1197	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e892d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1198	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e892e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1199	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e892f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1200	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8930	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1201	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8931	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1202	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8932	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1203	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8933	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1204	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8934	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1205	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8935	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1206	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8936	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1207	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8937	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1208	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8938	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1209	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8939	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1210	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e893a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1211	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e893b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1212	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e893c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1213	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e893d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1214	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e893e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1215	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e893f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1216	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8940	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1217	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8941	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1218	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8942	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1219	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8943	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1220	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8944	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1221	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8945	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1222	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8946	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1223	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8947	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1224	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8948	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1225	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8949	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1226	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e894a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1227	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e894b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1228	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e894c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1229	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e894d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1230	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e894e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1231	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e894f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1232	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8950	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1233	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8951	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1234	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8952	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1235	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8953	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1236	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8954	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1237	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8955	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1238	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8956	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1239	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8957	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1240	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8958	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1241	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8959	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1242	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e895a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1243	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e895b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1244	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e895c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1245	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e895d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1246	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e895e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1247	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e895f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1248	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8960	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1249	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8961	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1250	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8962	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1251	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8963	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1252	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8964	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1253	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8965	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1254	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8966	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1255	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8967	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1256	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8968	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1257	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8969	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1258	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e896a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1259	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e896b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1260	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e896c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1261	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e896d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1262	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e896e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1263	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e896f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1264	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8970	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1265	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8971	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1266	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8972	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1267	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8973	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1268	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8974	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1269	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8975	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1270	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8976	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1271	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8977	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1272	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8978	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1273	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8979	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1274	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e897a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1275	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e897b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1276	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e897c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1277	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e897d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1278	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e897e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1279	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e897f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1280	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8980	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1281	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8981	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1282	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8982	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1283	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8983	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1284	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8984	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1285	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8985	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1286	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8986	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1287	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8987	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1288	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8988	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1289	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8989	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1290	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e898a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1291	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e898b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1292	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e898c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1293	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e898d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1294	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e898e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1295	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e898f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1296	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8990	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1297	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8991	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1298	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8992	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1299	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8993	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1300	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8994	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1301	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8995	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1302	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8996	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1303	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8997	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1304	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8998	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1305	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8999	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1306	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e899a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1307	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e899b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1308	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e899c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1309	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e899d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1310	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e899e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1311	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e899f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1312	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1313	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1314	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1315	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1316	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1317	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1318	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1319	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1320	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1321	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89a9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1322	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89aa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1323	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1324	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1325	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1326	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1327	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89af	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1328	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1329	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1330	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1331	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1332	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1333	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1334	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1335	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1336	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1337	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89b9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1338	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1339	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89bb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1340	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89bc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1341	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89bd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1342	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89be	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1343	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89bf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1344	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1345	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1346	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1347	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1348	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1349	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1350	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1351	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1352	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1353	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89c9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1354	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1355	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89cb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1356	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89cc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1357	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89cd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1358	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ce	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1359	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89cf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1360	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1361	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1362	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1363	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1364	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1365	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1366	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1367	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1368	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1369	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89d9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1370	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89da	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1371	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89db	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1372	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89dc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1373	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89dd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1374	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89de	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1375	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89df	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1376	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1377	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1378	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1379	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1380	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1381	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1382	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1383	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1384	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1385	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89e9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1386	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1387	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89eb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1388	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1389	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1390	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1391	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1392	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1393	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1394	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1395	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1396	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1397	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1398	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1399	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1400	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1401	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89f9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1402	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89fa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1403	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89fb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1404	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89fc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1405	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89fd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1406	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89fe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1407	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e89ff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1408	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a00	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1409	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a01	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1410	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a02	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1411	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a03	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1412	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a04	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1413	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a05	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1414	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a06	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1415	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a07	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1416	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a08	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1417	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a09	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1418	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a0a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1419	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a0b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1420	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a0c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1421	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a0d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1422	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a0e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1423	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a0f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1424	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a10	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1425	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a11	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1426	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a12	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1427	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a13	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1428	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a14	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1429	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a15	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1430	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a16	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1431	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a17	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1432	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a18	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1433	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a19	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1434	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a1a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1435	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a1b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1436	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a1c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1437	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a1d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1438	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a1e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1439	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a1f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1440	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a20	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1441	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a21	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1442	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a22	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1443	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a23	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1444	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a24	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1445	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a25	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1446	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a26	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1447	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a27	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1448	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a28	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1449	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a29	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1450	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a2a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1451	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a2b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1452	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a2c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1453	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a2d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1454	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a2e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1455	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a2f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1456	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a30	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1457	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a31	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1458	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a32	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1459	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a33	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1460	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a34	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1461	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a35	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1462	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a36	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1463	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a37	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1464	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a38	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1465	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a39	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1466	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a3a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1467	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a3b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1468	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a3c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1469	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a3d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1470	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a3e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1471	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a3f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1472	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a40	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1473	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a41	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1474	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a42	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1475	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a43	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1476	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a44	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1477	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a45	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1478	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a46	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1479	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a47	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1480	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a48	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1481	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a49	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1482	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a4a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1483	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a4b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1484	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a4c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1485	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a4d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1486	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a4e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1487	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a4f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1488	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a50	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1489	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a51	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1490	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a52	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1491	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a53	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1492	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a54	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1493	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a55	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1494	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a56	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1495	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a57	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1496	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a58	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1497	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a59	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1498	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a5a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1499	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a5b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1500	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a5c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1501	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a5d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1502	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a5e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1503	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a5f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1504	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a60	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1505	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a61	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1506	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a62	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1507	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a63	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1508	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a64	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1509	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a65	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1510	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a66	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1511	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a67	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1512	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a68	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1513	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a69	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1514	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a6a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1515	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a6b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1516	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a6c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1517	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a6d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1518	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a6e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1519	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a6f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1520	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a70	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1521	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a71	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1522	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a72	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1523	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a73	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1524	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a74	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1525	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a75	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1526	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a76	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1527	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a77	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1528	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a78	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1529	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a79	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1530	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a7a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1531	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a7b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1532	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a7c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1533	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a7d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1534	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a7e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1535	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a7f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1536	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a80	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1537	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a81	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1538	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a82	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1539	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a83	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1540	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a84	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1541	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a85	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1542	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a86	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1543	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a87	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1544	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a88	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1545	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a89	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1546	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a8a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1547	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a8b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1548	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a8c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1549	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a8d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1550	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a8e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1551	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a8f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1552	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a90	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1553	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a91	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1554	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a92	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1555	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a93	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1556	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a94	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1557	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a95	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1558	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a96	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1559	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a97	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1560	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a98	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1561	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a99	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1562	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a9a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1563	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a9b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1564	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a9c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1565	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a9d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1566	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a9e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1567	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8a9f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1568	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1569	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1570	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1571	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1572	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1573	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1574	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1575	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1576	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1577	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aa9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1578	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aaa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1579	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1580	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1581	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1582	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1583	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aaf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1584	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1585	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1586	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1587	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1588	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1589	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1590	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1591	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1592	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1593	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ab9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1594	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1595	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8abb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1596	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8abc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1597	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8abd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1598	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8abe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1599	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8abf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1600	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1601	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1602	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1603	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1604	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1605	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1606	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1607	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1608	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1609	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ac9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1610	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1611	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8acb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1612	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8acc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1613	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8acd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1614	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ace	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1615	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8acf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1616	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1617	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1618	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1619	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1620	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1621	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1622	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1623	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1624	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1625	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ad9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1626	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ada	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1627	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8adb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1628	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8adc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1629	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8add	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1630	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ade	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1631	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8adf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1632	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1633	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1634	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1635	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1636	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1637	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1638	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1639	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1640	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1641	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ae9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1642	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1643	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aeb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1644	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1645	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1646	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1647	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1648	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1649	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1650	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1651	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1652	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1653	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1654	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1655	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1656	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1657	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8af9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1658	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8afa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1659	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8afb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1660	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8afc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1661	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8afd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1662	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8afe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1663	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8aff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1664	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b00	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1665	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b01	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1666	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b02	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1667	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b03	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1668	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b04	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1669	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b05	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1670	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b06	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1671	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b07	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1672	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b08	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1673	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b09	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1674	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b0a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1675	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b0b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1676	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b0c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1677	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b0d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1678	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b0e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1679	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b0f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1680	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b10	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1681	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b11	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1682	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b12	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1683	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b13	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1684	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b14	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1685	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b15	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1686	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b16	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1687	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b17	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1688	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b18	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1689	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b19	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1690	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b1a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1691	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b1b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1692	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b1c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1693	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b1d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1694	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b1e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1695	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b1f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1696	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b20	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1697	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b21	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1698	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b22	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1699	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b23	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1700	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b24	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1701	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b25	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1702	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b26	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1703	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b27	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1704	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b28	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1705	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b29	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1706	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b2a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1707	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b2b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1708	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b2c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1709	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b2d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1710	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b2e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1711	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b2f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1712	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b30	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1713	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b31	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1714	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b32	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1715	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b33	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1716	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b34	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1717	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b35	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1718	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b36	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1719	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b37	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1720	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b38	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1721	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b39	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1722	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b3a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1723	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b3b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1724	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b3c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1725	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b3d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1726	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b3e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1727	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b3f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1728	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b40	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1729	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b41	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1730	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b42	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1731	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b43	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1732	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b44	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1733	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b45	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1734	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b46	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1735	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b47	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1736	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b48	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1737	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b49	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1738	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b4a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1739	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b4b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1740	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b4c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1741	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b4d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1742	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b4e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1743	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b4f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1744	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b50	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1745	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b51	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1746	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b52	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1747	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b53	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1748	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b54	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1749	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b55	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1750	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b56	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1751	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b57	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1752	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b58	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1753	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b59	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1754	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b5a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1755	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b5b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1756	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b5c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1757	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b5d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1758	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b5e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1759	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b5f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1760	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b60	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1761	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b61	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1762	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b62	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1763	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b63	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1764	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b64	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1765	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b65	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1766	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b66	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1767	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b67	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1768	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b68	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1769	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b69	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1770	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b6a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1771	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b6b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1772	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b6c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1773	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b6d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1774	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b6e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1775	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b6f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1776	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b70	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1777	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b71	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1778	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b72	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1779	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b73	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1780	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b74	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1781	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b75	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1782	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b76	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1783	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b77	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1784	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b78	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1785	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b79	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1786	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b7a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1787	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b7b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1788	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b7c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1789	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b7d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1790	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b7e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1791	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b7f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1792	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b80	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1793	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b81	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1794	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b82	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1795	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b83	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1796	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b84	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1797	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b85	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1798	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b86	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1799	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b87	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1800	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b88	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1801	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b89	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1802	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b8a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1803	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b8b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1804	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b8c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1805	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b8d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1806	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b8e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1807	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b8f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1808	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b90	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1809	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b91	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1810	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b92	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1811	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b93	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1812	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b94	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1813	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b95	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1814	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b96	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1815	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b97	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1816	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b98	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1817	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b99	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1818	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b9a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1819	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b9b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1820	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b9c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1821	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b9d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1822	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b9e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1823	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8b9f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1824	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1825	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1826	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1827	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1828	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1829	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1830	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1831	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1832	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1833	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8ba9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1834	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8baa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1835	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bab	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1836	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bac	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1837	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1838	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1839	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8baf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1840	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1841	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1842	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1843	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1844	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1845	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1846	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1847	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1848	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1849	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bb9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1850	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bba	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1851	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bbb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1852	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bbc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1853	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bbd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1854	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bbe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1855	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bbf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1856	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1857	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1858	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1859	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1860	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1861	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1862	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1863	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1864	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1865	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bc9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1866	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bca	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1867	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bcb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1868	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bcc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1869	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bcd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1870	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bce	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1871	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bcf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1872	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1873	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1874	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1875	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1876	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1877	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1878	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1879	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1880	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1881	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bd9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1882	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bda	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1883	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bdb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1884	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bdc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1885	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bdd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1886	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bde	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1887	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bdf	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1888	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1889	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1890	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1891	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1892	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1893	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1894	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1895	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1896	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1897	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8be9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1898	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bea	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1899	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8beb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1900	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bec	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1901	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bed	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1902	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bee	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1903	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bef	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1904	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf0	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1905	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf1	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1906	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf2	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1907	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf3	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1908	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf4	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1909	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf5	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1910	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf6	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1911	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf7	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1912	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf8	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1913	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bf9	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1914	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bfa	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1915	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bfb	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1916	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bfc	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1917	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bfd	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1918	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bfe	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1919	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8bff	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1920	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c00	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1921	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c01	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1922	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c02	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1923	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c03	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1924	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c04	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1925	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c05	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1926	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c06	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1927	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c07	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1928	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c08	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1929	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c09	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1930	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c0a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1931	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c0b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1932	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c0c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1933	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c0d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1934	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c0e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1935	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c0f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1936	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c10	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1937	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c11	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1938	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c12	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1939	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c13	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1940	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c14	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1941	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c15	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1942	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c16	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1943	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c17	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1944	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c18	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1945	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c19	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1946	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c1a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1947	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c1b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1948	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c1c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1949	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c1d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1950	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c1e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1951	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c1f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1952	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c20	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1953	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c21	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1954	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c22	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1955	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c23	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1956	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c24	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1957	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c25	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1958	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c26	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1959	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c27	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1960	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c28	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1961	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c29	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1962	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c2a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1963	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c2b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1964	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c2c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1965	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c2d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1966	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c2e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1967	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c2f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1968	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c30	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1969	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c31	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1970	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c32	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1971	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c33	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1972	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c34	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1973	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c35	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1974	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c36	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1975	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c37	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1976	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c38	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1977	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c39	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1978	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c3a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1979	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c3b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1980	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c3c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1981	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c3d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1982	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c3e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1983	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c3f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1984	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c40	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1985	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c41	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1986	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c42	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1987	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c43	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1988	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c44	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1989	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c45	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1990	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c46	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1991	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c47	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1992	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c48	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1993	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c49	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1994	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c4a	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1995	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c4b	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1996	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c4c	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1997	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c4d	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1998	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c4e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1999	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8c4f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	0	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8480	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000000	\N	1796462063.317605	\N	\N	1	682de651-1202-433d-8cba-99d083ad903c
3	1	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8481	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000001	\N	1796462063.317605	\N	\N	1	0afebe67-94dd-4835-8213-3c453000d8ec
3	2	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8482	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000002	\N	1796462063.317605	\N	\N	1	41656a7f-fd5f-44da-a89a-f12828aa50c9
3	3	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8483	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000003	\N	1796462063.317605	\N	\N	1	e164b10c-25ad-4bf4-9337-7434ba72caeb
3	4	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8484	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000004	\N	1796462063.317605	\N	\N	1	f4ccf21e-b487-41e3-afed-1a67cf0cfb83
3	6	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8486	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000006	\N	1796462063.317605	\N	\N	1	a8253ab3-585a-4f25-85a0-63001c852881
3	7	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8487	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000007	\N	1796462063.317605	\N	\N	1	cff57360-9812-45b9-a98d-27b45856ac39
3	8	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8488	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000008	\N	1796462063.317605	\N	\N	1	1fa7e593-6cbe-4b1a-9900-73fe087aad4f
3	9	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8489	\N	3	1	1796462063.317605	200	\N	46a40e8e-f06f-40c5-a62a-000000000009	\N	1796462063.317605	\N	\N	1	3fd8443d-20c3-4318-a8fd-e803ddde2e59
3	5	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8485	\N	2	1	1796464497.5038483	503	ServiceUnavailable	\N	\N	\N	\N	\N	1	\N
3	16	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8490	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-000000000010	\N	1796462063.337482	\N	\N	1	06b2a50e-c15c-4d9f-b3b1-33d3cb7f8f98
3	17	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8491	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-000000000011	\N	1796462063.337482	\N	\N	1	f39ef58b-26bf-4f9f-8724-d7f429594e55
3	18	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8492	\N	3	1	1796462063.337482	200	\N	46a40e8e-f06f-40c5-a62a-000000000012	\N	1796462063.337482	\N	\N	1	3bdb6184-b85f-44b3-a124-24d58fdd5b39
3	21	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8495	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-000000000015	\N	1796462063.3545697	\N	\N	1	58343c35-2bb8-4a98-9278-bd2ef115c683
3	22	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8496	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-000000000016	\N	1796462063.3545697	\N	\N	1	409070aa-9a9b-4a9b-8f39-fe34cef5e523
3	23	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8497	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-000000000017	\N	1796462063.3545697	\N	\N	1	76514728-b411-46d6-a612-f553c95802cb
3	24	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8498	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-000000000018	\N	1796462063.3545697	\N	\N	1	b2c5a302-33ac-4ab7-9b68-2a00086ab367
3	25	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e8499	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-000000000019	\N	1796462063.3545697	\N	\N	1	502bcbb1-8deb-4a49-9063-33e623caf88d
3	26	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e849a	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-00000000001a	\N	1796462063.3545697	\N	\N	1	39347923-2198-4ca5-8c5e-a6be82ec731c
3	27	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e849b	\N	3	1	1796462063.3545697	200	\N	46a40e8e-f06f-40c5-a62a-00000000001b	\N	1796462063.3545697	\N	\N	1	87c78015-5613-4546-94b8-6cb68333a96d
3	37	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a5	\N	3	1	1796462063.367287	200	\N	46a40e8e-f06f-40c5-a62a-000000000025	\N	1796462063.367287	\N	\N	1	2d66c884-57b3-4384-bf8c-14c7c88aa44f
3	38	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84a6	\N	3	1	1796462063.367287	200	\N	46a40e8e-f06f-40c5-a62a-000000000026	\N	1796462063.367287	\N	\N	1	3808033f-0f97-4cbf-b9b7-2b0a4e91d6d8
3	47	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84af	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-00000000002f	\N	1796462063.7189994	\N	\N	1	e959e059-c071-45dd-81f0-0dbdcebed38b
3	48	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b0	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-000000000030	\N	1796462063.7189994	\N	\N	1	12a4295c-1ee7-4714-b84a-0c4ee9813733
3	49	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b1	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-000000000031	\N	1796462063.7189994	\N	\N	1	b7becac7-d3a9-46ab-87c8-ca74a80138d7
3	50	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b2	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-000000000032	\N	1796462063.7189994	\N	\N	1	a1a3bf6d-b98b-4888-bf0a-080b78b8b1dc
3	51	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b3	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-000000000033	\N	1796462063.7189994	\N	\N	1	b45301f3-7759-4510-85a7-a20730565b8b
3	52	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b4	\N	3	1	1796462063.7189994	200	\N	46a40e8e-f06f-40c5-a62a-000000000034	\N	1796462063.7189994	\N	\N	1	37ac5e27-af01-4c22-aacc-efc8c1b6da94
3	56	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b8	\N	3	1	1796462063.730938	200	\N	46a40e8e-f06f-40c5-a62a-000000000038	\N	1796462063.730938	\N	\N	1	254a4b9e-64fe-467f-ae7b-3b33c89582f3
3	57	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84b9	\N	3	1	1796462063.7476625	200	\N	46a40e8e-f06f-40c5-a62a-000000000039	\N	1796462063.7476625	\N	\N	1	c4d26dc1-69b6-42bf-b287-a3a2ab25ad3e
3	59	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84bb	\N	3	1	1796462063.7978501	200	\N	46a40e8e-f06f-40c5-a62a-00000000003b	\N	1796462063.7978501	\N	\N	1	e7749fbf-a389-4eca-9b0b-c132f8e1ec71
3	61	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84bd	\N	3	1	1796462063.8479075	200	\N	46a40e8e-f06f-40c5-a62a-00000000003d	\N	1796462063.8479075	\N	\N	1	29e690b6-f5a5-44b9-8846-0595d79ab03d
3	63	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84bf	\N	3	1	1796462063.8977284	200	\N	46a40e8e-f06f-40c5-a62a-00000000003f	\N	1796462063.8977284	\N	\N	1	7dd2a15e-bd1b-4497-8abe-1fda4b3b782f
3	66	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c2	\N	3	1	1796462063.9755504	200	\N	46a40e8e-f06f-40c5-a62a-000000000042	\N	1796462063.9755504	\N	\N	1	483e5628-d3df-4318-84cc-50e1566a0e38
3	68	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c4	\N	3	1	1796462064.0268574	200	\N	46a40e8e-f06f-40c5-a62a-000000000044	\N	1796462064.0268574	\N	\N	1	f3d6cf2f-f78b-4d95-8f92-b2c30b98fe25
3	70	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c6	\N	3	1	1796462064.0761373	200	\N	46a40e8e-f06f-40c5-a62a-000000000046	\N	1796462064.0761373	\N	\N	1	b4b31324-e3e4-4768-b028-961965847d13
3	72	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84c8	\N	3	1	1796462064.1239848	200	\N	46a40e8e-f06f-40c5-a62a-000000000048	\N	1796462064.1239848	\N	\N	1	b4ebf304-7a33-416b-8880-05ba1d2da7a0
3	75	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84cb	\N	3	1	1796462064.1987784	200	\N	46a40e8e-f06f-40c5-a62a-00000000004b	\N	1796462064.1987784	\N	\N	1	bf51d6c4-95e8-44d1-9414-4e5f9f36da2d
3	77	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84cd	\N	3	1	1796462064.248479	200	\N	46a40e8e-f06f-40c5-a62a-00000000004d	\N	1796462064.248479	\N	\N	1	96e84d29-2f42-4162-a86d-0be40cf47d91
3	79	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84cf	\N	3	1	1796462064.2998002	200	\N	46a40e8e-f06f-40c5-a62a-00000000004f	\N	1796462064.2998002	\N	\N	1	ebb5db44-6cc0-4a68-bfa0-cca21054205b
3	82	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d2	\N	3	1	1796462064.3734097	200	\N	46a40e8e-f06f-40c5-a62a-000000000052	\N	1796462064.3734097	\N	\N	1	e1173c31-5f14-4dde-b7f4-706ab9286cf0
3	84	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d4	\N	3	1	1796462064.424068	200	\N	46a40e8e-f06f-40c5-a62a-000000000054	\N	1796462064.424068	\N	\N	1	6993d51c-193f-4b80-9408-74d70ff2080c
3	86	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d6	\N	3	1	1796462064.4730523	200	\N	46a40e8e-f06f-40c5-a62a-000000000056	\N	1796462064.4730523	\N	\N	1	c71c5cfd-7093-41a2-849f-29b2e01b2dae
3	88	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84d8	\N	3	1	1796462064.523633	200	\N	46a40e8e-f06f-40c5-a62a-000000000058	\N	1796462064.523633	\N	\N	1	5684b42e-8b3d-4671-aaef-c96742fc1960
3	91	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84db	\N	3	1	1796462064.598838	200	\N	46a40e8e-f06f-40c5-a62a-00000000005b	\N	1796462064.598838	\N	\N	1	6d7cbec7-780a-47f5-8258-50faf17dd3c2
3	93	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84dd	\N	3	1	1796462064.6509037	200	\N	46a40e8e-f06f-40c5-a62a-00000000005d	\N	1796462064.6509037	\N	\N	1	56d6443b-09fa-4b67-b8d1-7a5d732e4b4e
3	95	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84df	\N	3	1	1796462064.7009156	200	\N	46a40e8e-f06f-40c5-a62a-00000000005f	\N	1796462064.7009156	\N	\N	1	f6e16c06-d839-4b1c-9b8e-3b8aefc8c5cb
3	97	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e1	\N	3	1	1796462064.7485852	200	\N	46a40e8e-f06f-40c5-a62a-000000000061	\N	1796462064.7485852	\N	\N	1	8950b8cb-7b22-49b0-bf9a-999c6e677dad
3	100	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1e84e4	\N	3	1	1796462064.8234708	200	\N	46a40e8e-f06f-40c5-a62a-000000000064	\N	1796462064.8234708	\N	\N	1	978cb5f7-68e7-4e03-9ddb-8f131fefe7f7
\.


--
-- Data for Name: feedback_outbox; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.feedback_outbox (seq, token, timestamp_ms, reason, batch) FROM stdin;
1	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff895440	1765000000000	Unregistered	\N
2	ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4254	1765100000000	Unregistered	\N
\.


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.idempotency_keys (key, request_sha256, campaign_id, created_at) FROM stdin;
\.


--
-- Data for Name: instances; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.instances (owner, started_at, heartbeat_at) FROM stdin;
vm/10865/1796462061.495366	1796462061.5422015	1796462061.5422015
vm/10935/1796462063.180848	1796462063.2005444	1796462063.2005444
\.


--
-- Data for Name: live_activity_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.live_activity_tokens (app, token, kind, activity, registered_at_ms) FROM stdin;
\.


--
-- Data for Name: provider_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.provider_tokens (team_id, key_id, key_sha256, token, issued_at, paused_until) FROM stdin;
TEAM123456	KEY1234567	5a49d295b7bf5d0f811ee54896538ba2d7ae5a20eb1ab5e01c74f1c296954a96	eyJhbGciOiJFUzI1NiIsImtpZCI6IktFWTEyMzQ1NjcifQ.eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxNzk2NDYyMDYxfQ.vGAsmGL4wy6M3DFOXwHwtxhOVMDj0C8JGDd3phWzGK08AE1rFkAxGogdOToaHuOyRnzeIkoDPuhdwzWcfrGUnA	1796462061	\N
\.


--
-- Data for Name: pushgate_schema; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.pushgate_schema (version) FROM stdin;
6
\.


--
-- Data for Name: tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tokens (token, dead_at_ms, dead_reason, recorded_at, registered_at_ms, app) FROM stdin;
ffffffffffffffffffffffffffffffffffffffffffffffffffffffffff895440	1765000000000	Unregistered	1796462061.6045103	\N	default
ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff4254	1765100000000	Unregistered	1796462061.6750078	\N	default
\.


--
-- Data for Name: webhook_leases; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_leases (outbox, owner, until) FROM stdin;
\.


--
-- Name: campaign_events_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.campaign_events_seq_seq', 2, true);


--
-- Name: campaigns_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.campaigns_seq_seq', 3, true);


--
-- Name: count_shards; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.count_shards', 3, true);


--
-- Name: feedback_outbox_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.feedback_outbox_seq_seq', 2, true);


--
-- Name: campaign_counts campaign_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_counts
    ADD CONSTRAINT campaign_counts_pkey PRIMARY KEY (campaign, state, shard);


--
-- Name: campaign_events campaign_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_events
    ADD CONSTRAINT campaign_events_pkey PRIMARY KEY (seq);


--
-- Name: campaigns campaigns_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaigns
    ADD CONSTRAINT campaigns_id_key UNIQUE (id);


--
-- Name: campaigns campaigns_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaigns
    ADD CONSTRAINT campaigns_pkey PRIMARY KEY (seq);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (campaign, idx);


--
-- Name: feedback_outbox feedback_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.feedback_outbox
    ADD CONSTRAINT feedback_outbox_pkey PRIMARY KEY (seq);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (key);


--
-- Name: instances instances_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.instances
    ADD CONSTRAINT instances_pkey PRIMARY KEY (owner);


--
-- Name: live_activity_tokens live_activity_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_tokens
    ADD CONSTRAINT live_activity_tokens_pkey PRIMARY KEY (app, token);


--
-- Name: provider_tokens provider_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_tokens
    ADD CONSTRAINT provider_tokens_pkey PRIMARY KEY (team_id, key_id, key_sha256);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (token);


--
-- Name: webhook_leases webhook_leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_leases
    ADD CONSTRAINT webhook_leases_pkey PRIMARY KEY (outbox);


--
-- Name: campaign_events_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_events_campaign ON public.campaign_events USING btree (campaign);


--
-- Name: campaigns_finished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_finished ON public.campaigns USING btree (finished_at) WHERE (finished_at IS NOT NULL);


--
-- Name: campaigns_owner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_owner ON public.campaigns USING btree (owner, seq);


--
-- Name: campaigns_unfinished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_unfinished ON public.campaigns USING btree (seq) WHERE (finished_at IS NULL);


--
-- Name: deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_due ON public.deliveries USING btree (campaign, next_at, idx) WHERE (state = ANY (ARRAY[0, 2]));


--
-- Name: deliveries_in_flight; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_in_flight ON public.deliveries USING btree (campaign, idx) WHERE (state = 1);


--
-- Name: deliveries_lease_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_lease_expiry ON public.deliveries USING btree (lease_until) WHERE (state = 1);


--
-- Name: deliveries_retry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_retry ON public.deliveries USING btree (campaign, next_at, idx) WHERE (state = 2);


--
-- Name: idempotency_age; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_age ON public.idempotency_keys USING btree (created_at);


--
-- Name: idempotency_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_campaign ON public.idempotency_keys USING btree (campaign_id);


--
-- Name: live_activity_tokens_activity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_tokens_activity ON public.live_activity_tokens USING btree (app, activity, kind);


--
-- Name: tokens_dead; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tokens_dead ON public.tokens USING btree (dead_at_ms, token) WHERE (dead_at_ms IS NOT NULL);


--
-- PostgreSQL database dump complete
--

\unrestrict HGXPVouvQRm3CzaZlUBfgCESg5KOGHZqnB7HdClyqGFsqnJFOATwjtXaIsW8mxZ


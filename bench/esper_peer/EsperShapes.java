// Esper (EsperTech, single-threaded) as a benchmark peer of SKIP TILL ANY MATCH patterns.
//
// Reads a `sym,ts_ms,price` CSV (sorted by ts_ms; ts_ms in epoch milliseconds), sends the
// events in that order to one Esper runtime from this thread, with the runtime's internal
// timer off: before each event the runtime's time is advanced to the event's ts_ms
// (EPEventService.advanceTime), so `timer:within` runs on event time. Counts the matches
// delivered to the listeners of the deployed statements and prints one JSON line:
//
//   {"system":"esper","version":...,"shape":...,"events":N,"matches":M,"seconds":S,
//    "events_per_second":N/S,"runs":[...],"epl":...}
//
// `seconds` is the time to send all events (median of --runs), each run on a fresh runtime
// after one untimed warm-up run on a fresh runtime of its own. Compiling the EPL and reading
// the CSV are not timed.
//
//   java -cp <esper jars>:<classes> EsperShapes --csv events.csv --shape seq
//        --syms S001,S002,S003,S004 --window-ms 1200000 [--runs 3] [--version 9.0.0]
//
// Shapes (window W ms, inclusive: last - first <= W; each sub-pattern started by the first
// event lives W + 1 ms and the last event's filter also checks ts <= first.ts + W):
//   seq   A B C D, D.price > A.price         --syms A,B,C,D
//   conj  PERMUTE(A, B, C, D), D.price > A.price   --syms A,B,C,D (one statement per
//         symbol that comes first; the other three in any order after it)
//   neg   A B !N C, C.price > A.price        --syms A,B,C,N
// `--epl` runs an EPL module given as text instead (statements separated by ';').

import com.espertech.esper.common.client.EPCompiled;
import com.espertech.esper.common.client.configuration.Configuration;
import com.espertech.esper.compiler.client.CompilerArguments;
import com.espertech.esper.compiler.client.EPCompiler;
import com.espertech.esper.compiler.client.EPCompilerProvider;
import com.espertech.esper.runtime.client.EPDeployment;
import com.espertech.esper.runtime.client.EPEventService;
import com.espertech.esper.runtime.client.EPRuntime;
import com.espertech.esper.runtime.client.EPRuntimeProvider;
import com.espertech.esper.runtime.client.EPStatement;

import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class EsperShapes {

    private static final String TYPE = "Tick";

    private EsperShapes() {}

    private static String tick(String sym, String extra) {
        return TYPE + "(sym='" + sym + "'" + (extra.isEmpty() ? "" : ", " + extra) + ")";
    }

    /** Every ordered combination `first -> rest...` (each `every`), within the window. */
    private static String chain(String[] tags, String[] syms, String[] lastFilter, long w) {
        StringBuilder inner = new StringBuilder();
        for (int i = 1; i < tags.length; i++) {
            if (i > 1) {
                inner.append(" -> ");
            }
            String extra = i == tags.length - 1 ? lastFilter[0] : "";
            inner.append("every ").append(tags[i]).append('=').append(tick(syms[i], extra));
        }
        return "every " + tags[0] + "=" + tick(syms[0], "") + " -> (" + inner
            + ") where timer:within(" + (w + 1) + " msec)";
    }

    static String epl(String shape, String[] s, long w) {
        String inWindow = "ts <= a.ts + " + w;
        switch (shape) {
            case "seq":
                // a before b before c before d (arrival order = time order: no ties).
                return "select * from pattern [" + chain(
                    new String[] {"a", "b", "c", "d"}, s,
                    new String[] {"price > a.price, " + inWindow}, w) + "]";
            case "conj": {
                // One statement per symbol that comes first; the three others follow it in
                // any order: `every x and every y and every z` pairs every x, y and z that
                // arrive (distinct timestamps: each 4-set has exactly one first event).
                String[] tags = {"a", "b", "c", "d"};
                StringBuilder module = new StringBuilder();
                for (int first = 0; first < 4; first++) {
                    StringBuilder rest = new StringBuilder();
                    for (int i = 0; i < 4; i++) {
                        if (i == first) {
                            continue;
                        }
                        if (rest.length() > 0) {
                            rest.append(" and ");
                        }
                        rest.append("every ").append(tags[i]).append('=').append(tick(s[i], ""));
                    }
                    String f = tags[first];
                    module.append("select * from pattern [every ").append(f).append('=')
                        .append(tick(s[first], "")).append(" -> (").append(rest)
                        .append(") where timer:within(").append(w + 1).append(" msec)]")
                        .append(" where d.price > a.price and max(a.ts, b.ts, c.ts, d.ts) - ")
                        .append(f).append(".ts <= ").append(w).append(";\n");
                }
                return module.toString();
            }
            case "neg":
                // a before b before c, and no n between b and c: `not n` ends the sub-pattern
                // that b started at the first n after b.
                return "select * from pattern [every a=" + tick(s[0], "") + " -> (every b="
                    + tick(s[1], "") + " -> (every c=" + tick(s[2], "price > a.price, " + inWindow)
                    + " and not " + tick(s[3], "") + ")) where timer:within(" + (w + 1)
                    + " msec)]";
            default:
                throw new IllegalArgumentException("unknown shape " + shape);
        }
    }

    private static final class Counter {
        long matches;
    }

    private static Object[][] read(Path csv) throws Exception {
        List<Object[]> rows = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(csv, StandardCharsets.UTF_8)) {
            String line = r.readLine(); // header
            if (line != null && !line.startsWith("sym")) {
                throw new IllegalArgumentException("expected a sym,ts_ms,price header");
            }
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] f = line.split(",", -1);
                rows.add(new Object[] {f[0].intern(), Long.parseLong(f[1]), Double.parseDouble(f[2])});
            }
        }
        Object[][] events = rows.toArray(new Object[0][]);
        for (int i = 1; i < events.length; i++) {
            if ((Long) events[i][1] < (Long) events[i - 1][1]) {
                throw new IllegalArgumentException("events are not in time order at line " + (i + 2));
            }
        }
        return events;
    }

    private static Configuration config() {
        Configuration config = new Configuration();
        config.getCommon().addEventType(TYPE, new String[] {"sym", "ts", "price"},
            new Object[] {String.class, long.class, double.class});
        config.getRuntime().getThreading().setInternalTimerEnabled(false);
        return config;
    }

    /** One run on a fresh runtime: [seconds, matches]. */
    private static double[] run(Configuration config, EPCompiled compiled, Object[][] events, int id)
        throws Exception {
        EPRuntime runtime = EPRuntimeProvider.getRuntime("esper-shapes-" + id, config);
        runtime.initialize();
        try {
            EPEventService service = runtime.getEventService();
            service.advanceTime(events.length == 0 ? 0L : (Long) events[0][1]);
            EPDeployment deployment = runtime.getDeploymentService().deploy(compiled);
            Counter counter = new Counter();
            for (EPStatement statement : deployment.getStatements()) {
                statement.addListener((newData, oldData, stmt, rt) -> {
                    if (newData != null) {
                        counter.matches += newData.length;
                    }
                });
            }
            long t0 = System.nanoTime();
            for (Object[] e : events) {
                service.advanceTime((Long) e[1]);
                service.sendEventObjectArray(e, TYPE);
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new double[] {seconds, counter.matches};
        } finally {
            runtime.destroy();
        }
    }

    private static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got " + argv[i]);
            }
            a.put(argv[i].substring(2), argv[i + 1]);
        }
        Path csv = Path.of(a.get("csv"));
        String shape = a.getOrDefault("shape", "custom");
        long window = Long.parseLong(a.getOrDefault("window-ms", "1200000"));
        int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
        String epl = a.containsKey("epl") ? a.get("epl")
            : epl(shape, a.get("syms").split(","), window);

        Object[][] events = read(csv);
        Configuration config = config();
        EPCompiler compiler = EPCompilerProvider.getCompiler();
        EPCompiled compiled = compiler.compile(epl, new CompilerArguments(config));

        double[] warm = run(config, compiled, events, 0);
        double[] seconds = new double[runs];
        long matches = (long) warm[1];
        for (int i = 0; i < runs; i++) {
            double[] r = run(config, compiled, events, i + 1);
            seconds[i] = r[0];
            if ((long) r[1] != matches) {
                throw new IllegalStateException("match counts differ between runs: " + matches
                    + " and " + (long) r[1]);
            }
        }
        double[] sorted = seconds.clone();
        Arrays.sort(sorted);
        double median = runs % 2 == 1 ? sorted[runs / 2]
            : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2;
        StringBuilder runList = new StringBuilder("[");
        for (int i = 0; i < runs; i++) {
            runList.append(i == 0 ? "" : ", ").append(String.format("%.4f", seconds[i]));
        }
        runList.append(']');
        String version = a.getOrDefault("version",
            EPRuntimeProvider.class.getPackage().getImplementationVersion());
        System.out.println("{\"system\": \"esper\", \"version\": "
            + (version == null ? "null" : json(version))
            + ", \"shape\": " + json(shape) + ", \"events\": " + events.length
            + ", \"matches\": " + matches + ", \"seconds\": " + String.format("%.4f", median)
            + ", \"events_per_second\": " + Math.round(events.length / Math.max(median, 1e-9))
            + ", \"runs\": " + runList + ", \"warmup_seconds\": " + String.format("%.4f", warm[0])
            + ", \"window_ms\": " + window + ", \"epl\": " + json(epl) + "}");
    }
}

package com.shellexec.conformance;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.shellexec.client.Feed;
import com.shellexec.client.ShellExecClient;
import com.shellexec.client.ShellExecException;
import com.shellexec.v1.GetShellOutputResponse;
import com.shellexec.v1.ListMessagesResponse;
import com.shellexec.v1.ListSessionsResponse;
import com.shellexec.v1.Message;
import com.shellexec.v1.PublishUpdateResponse;
import com.shellexec.v1.Session;
import com.shellexec.v1.ShellExecSummary;
import com.shellexec.v1.Turn;
import com.shellexec.v1.WatchMessagesResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Plays the conformance scenario (tests/clients/scenario.json, described in its README) with
 * the Java client against one address: {@code ConformanceRunner <host:port> <scenario.json>}.
 * Exits 0 when every step answers as the scenario says; otherwise prints the first difference
 * and exits 1. tests/clients/test_conformance_java.py runs it straight to the server and
 * through Envoy.
 */
public final class ConformanceRunner {
  private static final String HEARTBEAT = "heartbeat";
  private static final Gson GSON = new Gson();

  private final ShellExecClient client;
  private final JsonObject scenario;
  private final List<Created> runSessions = new ArrayList<>();
  private String runTaskId = "";

  private ConformanceRunner(ShellExecClient client, JsonObject scenario) {
    this.client = client;
    this.scenario = scenario;
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: ConformanceRunner <host:port> <scenario.json>");
      System.exit(2);
    }
    JsonObject scenario = JsonParser.parseString(Files.readString(Path.of(args[1])))
        .getAsJsonObject();
    try (ShellExecClient client = ShellExecClient.builder(args[0]).build()) {
      new ConformanceRunner(client, scenario).play();
    } catch (ScenarioMismatch | ShellExecException failure) {
      System.err.println("conformance failed against " + args[0] + ": " + failure.getMessage());
      System.exit(1);
    }
    System.out.println("conformance scenario passed against " + args[0]);
  }

  private void play() {
    JsonObject session = scenario.getAsJsonObject("session");
    runTaskId = session.get("task_id_prefix").getAsString() + "-java-" + suffix();
    Session created = createSession("", session.get("agent").getAsString());
    Turn turn = client.startTurn(created.getId(), "");
    for (JsonElement element : scenario.getAsJsonArray("publishes")) {
      JsonObject entry = element.getAsJsonObject();
      long sequence = entry.get("sequence").getAsLong();
      PublishUpdateResponse answer =
          client.publish(created.getId(), plain(entry.get("update")), sequence);
      expect(answer.getDuplicate(), entry.get("duplicate").getAsBoolean(),
          "duplicate of sequence " + sequence);
    }
    client.completeTurn(created.getId(), turn.getId(),
        scenario.get("stop_reason").getAsString());
    Session finished = client.getSession(created.getId());
    JsonObject expected = scenario.getAsJsonObject("final_session");
    expect(finished.getState(), expected.get("state").getAsString(), "final session state");
    expect(finished.getRevision(), expected.get("revision").getAsInt(), "final revision");

    List<Message> messages = allPages(created.getId(), scenario.get("page_size").getAsInt());
    JsonArray described = scenario.getAsJsonArray("messages");
    expect(messages.size(), described.size(), "number of messages");
    for (int index = 0; index < messages.size(); index++) {
      expect(described(messages.get(index)), plain(described.get(index)), "message " + index);
    }
    checkShellOutput(created.getId(), messages);
    checkWatch(created.getId(), messages);
    checkErrors(created.getId(), messages);
    checkSessionList();
  }

  /** Creates one of the run's sessions, for the run's task id followed by {@code suffix}. */
  private Session createSession(String suffix, String agent) {
    Session session = client.createSession(runTaskId + suffix, agent, "");
    runSessions.add(new Created(session.getId(), runTaskId + suffix, agent));
    return session;
  }

  private List<Message> allPages(String sessionId, int pageSize) {
    List<ListMessagesResponse> pages = new ArrayList<>();
    pages.add(client.listMessages(sessionId, pageSize, "", "", ""));
    while (pages.get(pages.size() - 1).getHasMore()) {
      String cursor = pages.get(pages.size() - 1).getCursor();
      pages.add(client.listMessages(sessionId, pageSize, "", cursor, ""));
    }
    if (pages.size() < 2) {
      throw new ScenarioMismatch("page_size must be smaller than the number of messages");
    }
    return pages.stream().flatMap(page -> page.getMessagesList().stream()).toList();
  }

  /** The message in the scenario's terms (the keys tests/clients/README.md lists). */
  private static Map<String, Object> described(Message message) {
    Map<String, Object> described = new LinkedHashMap<>();
    described.put("author_type", message.getAuthorType());
    described.put("type", message.getType());
    described.put("content", message.getContent());
    if (message.getMetadata().hasNormalized()) {
      ShellExecSummary shell = message.getMetadata().getNormalized().getShellExec();
      described.put("status", message.getMetadata().getStatus());
      described.put("command", shell.getCommand());
      described.put("exit_code", (double) shell.getOutput().getExitCode());
      described.put("result", shell.getResult());
    }
    return described;
  }

  private void checkShellOutput(String sessionId, List<Message> messages) {
    JsonObject expected = scenario.getAsJsonObject("shell_output");
    int index = expected.get("message").getAsInt();
    GetShellOutputResponse answer = client.shellOutput(sessionId, messages.get(index).getId());
    expect(answer.getStatus(), expected.get("status").getAsString(), "shell output status");
    expect(answer.getOutput().getExitCode(), expected.get("exit_code").getAsInt(), "exit code");
    expect(answer.getOutput().getStdout(), expected.get("stdout").getAsString(), "stdout");
    expect(answer.getOutput().getStderr(), expected.get("stderr").getAsString(), "stderr");
  }

  private void checkWatch(String sessionId, List<Message> messages) {
    JsonObject watch = scenario.getAsJsonObject("watch");
    List<String> events = new ArrayList<>();
    List<Integer> revisions = new ArrayList<>();
    for (JsonElement element : watch.getAsJsonArray("events")) {
      JsonObject event = element.getAsJsonObject();
      revisions.add(event.get("revision").getAsInt());
      JsonElement message = event.get("message");  // null for a turn's own events
      events.add(event(event.get("revision").getAsInt(), event.get("type").getAsString(),
          message.isJsonNull() ? "" : messages.get(message.getAsInt()).getId()));
    }
    expect(watched(sessionId, 0, events.size()), events, "events watched from revision 0");
    int resume = watch.get("resume_from_revision").getAsInt();
    List<String> tail = new ArrayList<>();
    for (int index = 0; index < events.size(); index++) {
      if (revisions.get(index) > resume) {
        tail.add(events.get(index));
      }
    }
    expect(watched(sessionId, resume, tail.size()), tail, "events resumed from " + resume);
  }

  private List<String> watched(String sessionId, int since, int count) {
    List<String> seen = new ArrayList<>();
    try (Feed feed = client.watch(sessionId, since)) {
      while (seen.size() < count && feed.hasNext()) {
        WatchMessagesResponse event = feed.next();
        if (!event.getType().equals(HEARTBEAT)) {
          seen.add(event(event.getRevision(), event.getType(), event.getMessage().getId()));
        }
      }
    }
    return seen;
  }

  private static String event(int revision, String type, String messageId) {
    return revision + " " + type + " " + messageId;
  }

  private void checkErrors(String sessionId, List<Message> messages) {
    JsonObject errors = scenario.getAsJsonObject("errors");
    JsonObject foreign = errors.getAsJsonObject("foreign_message");
    Session other = createSession("-" + foreign.get("task_suffix").getAsString(), "");
    String messageId = messages.get(foreign.get("message").getAsInt()).getId();
    ShellExecException notFound =
        failure(() -> client.shellOutput(other.getId(), messageId), "foreign message");
    expect(notFound.code().name(), foreign.get("code").getAsString(), "foreign message code");

    JsonObject bad = errors.getAsJsonObject("bad_field");
    checkBadField(bad, failure(
        () -> client.listMessages(sessionId, bad.get("limit").getAsInt(), "", "", ""),
        "bad field"), "bad field");
    JsonObject badList = errors.getAsJsonObject("bad_session_list_field");
    checkBadField(badList, failure(
        () -> client.listSessions(badList.get("limit").getAsInt(), "", "", ""),
        "bad session list field"), "bad session list field");
  }

  private static void checkBadField(JsonObject bad, ShellExecException invalid, String what) {
    expect(invalid.code().name(), bad.get("code").getAsString(), what + " code");
    String field = bad.get("field").getAsString();
    if (!invalid.fieldViolations().containsKey(field)) {
      throw new ScenarioMismatch(what + ": no violation of " + field + " in "
          + invalid.fieldViolations());
    }
  }

  private void checkSessionList() {
    JsonObject list = scenario.getAsJsonObject("session_list");
    JsonObject added = list.getAsJsonObject("added_session");
    createSession("-" + added.get("task_suffix").getAsString(),
        added.get("agent").getAsString());
    List<Session> listed =
        newestPages(list.get("page_size").getAsInt(), runSessions.get(0).id());
    List<Created> runs = new ArrayList<>();
    for (int index = listed.size() - 1; index >= 0; index--) {
      Session session = listed.get(index);
      String taskId = session.getTaskId();
      if (taskId.equals(runTaskId) || taskId.startsWith(runTaskId + "-")) {
        runs.add(new Created(session.getId(), taskId, session.getAgent()));
      }
    }
    expect(runs, runSessions, "the run's sessions, oldest first");
  }

  /**
   * The sessions, newest first, page by page up to the one holding {@code oldestId} (older
   * sessions belong to other runs).
   */
  private List<Session> newestPages(int pageSize, String oldestId) {
    ListSessionsResponse page = client.listSessions(pageSize, "", "", "desc");
    List<Session> listed = new ArrayList<>(page.getSessionsList());
    int pages = 1;
    while (page.getHasMore() && page.getSessionsList().stream()
        .noneMatch(session -> session.getId().equals(oldestId))) {
      page = client.listSessions(pageSize, page.getCursor(), "", "desc");
      listed.addAll(page.getSessionsList());
      pages++;
    }
    if (pages < 2) {
      throw new ScenarioMismatch(
          "session_list.page_size must be smaller than the run's sessions");
    }
    return listed;
  }

  private static ShellExecException failure(Runnable call, String what) {
    try {
      call.run();
    } catch (ShellExecException expected) {
      return expected;
    }
    throw new ScenarioMismatch(what + ": the call succeeded, an error was expected");
  }

  /** A scenario value as plain Java maps, lists and scalars (numbers become doubles). */
  private static Object plain(JsonElement element) {
    return GSON.fromJson(element, Object.class);
  }

  private static String suffix() {
    return UUID.randomUUID().toString().substring(0, 8);
  }

  private static void expect(Object actual, Object expected, String what) {
    if (!Objects.equals(actual, expected)) {
      throw new ScenarioMismatch(what + ": got " + actual + ", the scenario says " + expected);
    }
  }

  /** A session the run created: its id, and the task id and agent it was created with. */
  private record Created(String id, String taskId, String agent) {}

  /** A step that did not answer as the scenario says. */
  private static final class ScenarioMismatch extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ScenarioMismatch(String message) {
      super(message);
    }
  }
}
